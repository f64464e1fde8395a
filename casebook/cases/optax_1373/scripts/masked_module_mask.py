optax.masked(optax.add_decayed_weights(1e-4), mask).init(params)

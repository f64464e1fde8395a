optax.adamw(1e-3, mask=mask).init(params)

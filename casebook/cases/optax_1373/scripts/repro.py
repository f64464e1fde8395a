optax.inject_hyperparams(optax.adamw)(learning_rate=1e-3, mask=mask).init(params)

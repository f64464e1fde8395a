optax.inject_hyperparams(optax.adamw)(learning_rate=1e-3, mask=lambda p: mask).init(params)

optim = optax.inject_hyperparams(optax.adam)(learning_rate=1e-2)
optim.update(arrays, optim.init(arrays), model)

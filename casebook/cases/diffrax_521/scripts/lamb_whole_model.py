optim = optax.lamb(1e-2)
optim.update(arrays, optim.init(arrays), model)

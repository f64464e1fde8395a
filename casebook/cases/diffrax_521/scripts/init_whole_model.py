optim = optax.MultiSteps(optax.adam(1e-2), every_k_schedule=4)
optim.init(model)

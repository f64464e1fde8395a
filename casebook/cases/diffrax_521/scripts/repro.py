optim = optax.MultiSteps(optax.adam(1e-2), every_k_schedule=4)
eqx.filter_jit(optim.update)(arrays, optim.init(arrays), model)

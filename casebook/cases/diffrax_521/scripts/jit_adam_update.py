optim = optax.adam(1e-2)
jax.jit(optim.update)(arrays, optim.init(arrays), model)

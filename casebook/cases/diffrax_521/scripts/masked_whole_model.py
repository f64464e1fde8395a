optim = optax.masked(optax.adam(1e-2), lambda p: jax.tree.map(eqx.is_array, p))
optim.update(arrays, optim.init(arrays), model)

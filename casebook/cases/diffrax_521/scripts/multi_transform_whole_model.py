optim = optax.multi_transform({'adam': optax.adam(1e-2)}, lambda p: jax.tree.map(lambda _: 'adam', p))
optim.update(arrays, optim.init(arrays), model)

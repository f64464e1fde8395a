import equinox as eqx, jax, jax.numpy as jnp, optax

model = eqx.nn.MLP(2, 1, 8, 1, key=jax.random.key(0))
loss = lambda m: jnp.mean(jax.vmap(m)(jnp.ones((16, 2))) ** 2)
optim = optax.lbfgs()  # was: optax.adam(1e-3)
state = optim.init(eqx.filter(model, eqx.is_inexact_array))
grads = eqx.filter_grad(loss)(model)
updates, state = optim.update(grads, state)

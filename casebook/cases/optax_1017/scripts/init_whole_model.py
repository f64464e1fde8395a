import jax, jax.numpy as jnp, equinox as eqx, optax
model = eqx.nn.MLP(2, 1, 4, 1, activation=jnp.tanh, key=jax.random.PRNGKey(0))
x, y = jnp.ones((8, 2)), jnp.zeros((8, 1))
loss = lambda m: jnp.mean((jax.vmap(m)(x) - y) ** 2)
optax.lbfgs().init(model)  # the whole model

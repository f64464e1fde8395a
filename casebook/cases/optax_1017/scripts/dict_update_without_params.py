import jax, jax.numpy as jnp, optax
params = {"w": jnp.ones(3)}
optim = optax.lbfgs()
grads = jax.grad(lambda p: jnp.sum(p["w"] ** 2))(params)
optim.update(grads, optim.init(params))  # no params

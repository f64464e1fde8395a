import jax, jax.numpy as jnp, equinox as eqx, optax
model = eqx.nn.MLP(2, 1, 4, 1, key=jax.random.key(0))
x, y = jnp.ones((8, 2)), jnp.zeros((8, 1))
loss = lambda m: jnp.mean((jax.vmap(m)(x) - y) ** 2)
opt = optax.lbfgs()
state = opt.init(eqx.filter(model, eqx.is_inexact_array))
grads = eqx.filter_grad(loss)(model)
opt.update(grads, state)  # the reporter's call: no params, no value, grad or value_fn
result = "fixed"

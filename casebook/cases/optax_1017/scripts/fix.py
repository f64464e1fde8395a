import equinox as eqx, jax, jax.numpy as jnp, optax

model = eqx.nn.MLP(2, 1, 8, 1, key=jax.random.key(0))
params, static = eqx.partition(model, eqx.is_inexact_array)  # arrays | the rest
loss = lambda p: jnp.mean(jax.vmap(eqx.combine(p, static))(jnp.ones((16, 2))) ** 2)
optim = optax.lbfgs()
state = optim.init(params)
value, grad = jax.value_and_grad(loss)(params)
updates, state = optim.update(grad, state, params, value=value, grad=grad, value_fn=loss)
print(loss(optax.apply_updates(params, updates)) < value)

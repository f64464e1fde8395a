import equinox as eqx, jax, jax.numpy as jnp, optax

model = eqx.nn.MLP(2, 1, 8, 1, key=jax.random.key(0))
loss = lambda m: jnp.mean(jax.vmap(m)(jnp.ones((16, 2))) ** 2)
optim = optax.lbfgs()  # was: optax.adam(1e-3)
state = optim.init(eqx.filter(model, eqx.is_inexact_array))
params, static = eqx.partition(model, eqx.is_inexact_array)  # the arrays
value_fn = lambda p: loss(eqx.combine(p, static))  # loss of the arrays
value, grads = jax.value_and_grad(value_fn)(params)
kw = dict(value=value, grad=grads, value_fn=value_fn)  # line search
updates, state = optim.update(grads, state, params, **kw)
print(value_fn(optax.apply_updates(params, updates)) < value)

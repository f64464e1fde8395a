import equinox as eqx, jax, jax.numpy as jnp, optax

model = eqx.nn.MLP(2, 1, 8, 1, key=jax.random.key(0))
params, static = eqx.partition(model, eqx.is_inexact_array)  # arrays
f = lambda p: jnp.mean(jax.vmap(eqx.combine(p, static))(jnp.eye(2)) ** 2)
optim = optax.lbfgs()
value, grad = jax.value_and_grad(f)(params)
kw = dict(value=value, grad=grad, value_fn=f)  # for the line search
updates, state = optim.update(grad, optim.init(params), params, **kw)
print(f(optax.apply_updates(params, updates)) < value)

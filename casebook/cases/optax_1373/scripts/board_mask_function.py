import jax, jax.numpy as jnp, optax
params = {"w": jnp.ones((2, 2)), "b": jnp.ones(2)}
grads = jax.tree.map(jnp.zeros_like, params)
kw = dict(learning_rate=1.0, weight_decay=0.5)
mask = lambda p: jax.tree.map(lambda x: x.ndim > 1, p)
got, _ = optax.inject_hyperparams(optax.adamw)(mask=mask, **kw).update(
    grads, optax.inject_hyperparams(optax.adamw)(mask=mask, **kw).init(params), params)
want, _ = optax.adamw(mask=mask, **kw).update(grads, optax.adamw(mask=mask, **kw).init(params), params)
assert float(want["w"][0, 0]) == -0.5 and float(want["b"][0]) == 0.0  # the reference decays w
result = "fixed" if float(got["w"][0, 0]) == -0.5 else "silent"

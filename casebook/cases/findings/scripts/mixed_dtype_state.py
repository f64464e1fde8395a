params = {"w": jnp.ones((3, 3)), "b": jnp.ones(3, jnp.bfloat16)}
state = scanned(optax.contrib.prodigy(), params)
assert state.estim_lr.dtype == jnp.bfloat16
result = "fixed"

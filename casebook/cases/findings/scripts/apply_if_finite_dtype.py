import jax, jax.numpy as jnp, optax
params = {"w": jnp.ones((3, 3))}
grads = {"w": jnp.ones((3, 3), jnp.bfloat16)}
opt = optax.apply_if_finite(optax.adam(1e-2), max_consecutive_errors=3)
step = lambda state, _: (opt.update(grads, state, params)[1], None)
state = jax.lax.scan(step, opt.init(params), None, length=2)[0]
assert int(state.notfinite_count) == 0
result = "fixed"

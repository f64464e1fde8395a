import jax, jax.numpy as jnp, numpy as np, optax
opt = optax.MultiSteps(optax.chain(optax.zero_nans(), optax.sgd(1.0)), every_k_schedule=2)
params = jnp.zeros(3)
state, update = opt.init(params), jax.jit(opt.update)

for g in ([1.0, 2.0, 3.0], [3.0, 2.0, 1.0]):
    u, state = update(jnp.array(g), state, params)
assert state.inner_opt_state[0].found_nan.dtype == jnp.bool_
np.testing.assert_array_equal(u, [-2.0, -2.0, -2.0])
result = "fixed"

import jax, jax.numpy as jnp, numpy as np, optax
opt = optax.MultiSteps(optax.chain(optax.zero_nans(), optax.sgd(1.0)), every_k_schedule=2)
params = jnp.zeros(3)
state, update = opt.init(params), jax.jit(opt.update)

rows = []
for g in ([1, 2, 3], [1, float("nan"), 3], [3, 3, 3], [3, 3, 3]):
    u, state = update(jnp.array(g, jnp.float32), state, params)
    rows.append(u)
# zero_nans promises a zero update for the NaN cycle only; the next cycle is finite.
result = "silent" if float(rows[3][1]) == 0.0 else "fixed"
if result == "fixed":
    np.testing.assert_array_equal(rows[3], [-3.0, -3.0, -3.0])

import jax, jax.numpy as jnp, equinox as eqx

double = eqx.filter_closure_convert(lambda x: 2 * x, jnp.float32(1.0))
assert float(jax.jit(lambda x: double(x))(3.0)) == 6.0
result = "fixed"

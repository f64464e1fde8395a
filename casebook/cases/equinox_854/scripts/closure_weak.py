import jax, jax.numpy as jnp, equinox as eqx

double = eqx.filter_closure_convert(lambda x: 2 * x, jnp.float32(1.0))
print(jax.jit(lambda x: double(x))(3.0))

import jax.numpy as jnp

flags = jnp.array([True, False])
flags - flags

import jax, jax.numpy as jnp

key = jax.random.key(0)  # a state leaf that is a typed PRNG key
emit = jnp.asarray(True)
(1 - emit) * key + emit * key  # Fix A's merge of optax 0.1.9, (1 - emit) * st + emit * nst

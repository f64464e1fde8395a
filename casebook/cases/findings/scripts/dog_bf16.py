state = scanned(optax.scale_by_distance_over_gradients(), jnp.ones(4, jnp.bfloat16))
assert state.max_dist.dtype == jnp.bfloat16
result = "fixed"

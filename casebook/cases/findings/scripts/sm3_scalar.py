state = scanned(optax.sm3(1e-2), {"w": jnp.ones((3, 3)), "t": jnp.asarray(2.0)})
result = "fixed"

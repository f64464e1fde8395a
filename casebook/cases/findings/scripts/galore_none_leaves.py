params = {"w": jnp.ones((4, 3)), "activation": None}
state = scanned(optax.contrib.galore(1e-2, rank=2), params)
result = "fixed"

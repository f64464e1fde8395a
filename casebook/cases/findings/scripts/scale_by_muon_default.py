params = {"w1": jnp.ones((3, 3)) + jnp.eye(3), "w2": jnp.ones((3, 2))}
state = scanned(optax.contrib.scale_by_muon(), params)
assert state.mu["w2"].shape == (3, 2)
result = "fixed"

state = scanned(optax.monitor({"norm": optax.tree.norm}), jnp.ones(4))
assert float(state.measurements["norm"]) == 2.0
result = "fixed"

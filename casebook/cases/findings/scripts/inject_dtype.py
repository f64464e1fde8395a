opt = optax.inject_hyperparams(optax.adamw, hyperparam_dtype=jnp.float32)(learning_rate=1e-3)
state = scanned(opt, jnp.ones(4, jnp.bfloat16))
assert state.inner_state[0].mu.dtype == jnp.bfloat16
result = "fixed"

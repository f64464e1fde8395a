import diffrax, jax
pid = diffrax.PIDController(rtol=1e-3, atol=1e-6)
jax.lax.cond(True, lambda c: 0.0, lambda c: 1.0, pid)

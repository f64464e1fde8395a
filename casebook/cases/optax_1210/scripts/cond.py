jax.lax.cond(True, step, lambda carry: carry, carry)

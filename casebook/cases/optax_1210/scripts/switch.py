jax.lax.switch(0, [step, lambda carry: carry], carry)

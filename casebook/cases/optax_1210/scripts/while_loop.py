jax.lax.while_loop(lambda carry: True, step, restored)

jax.lax.fori_loop(0, 3, lambda i, carry: step(carry), restored)

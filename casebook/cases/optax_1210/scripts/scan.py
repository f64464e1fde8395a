jax.lax.scan(lambda carry, _: (step(carry), None), restored, length=3)

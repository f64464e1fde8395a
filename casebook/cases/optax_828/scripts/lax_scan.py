import jax; jax.lax.scan(lambda f, _: (1 - f, None), jax.numpy.bool_(True), None, length=2)

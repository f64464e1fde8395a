import jax; jax.lax.switch(0, [lambda f: f, lambda f: 1 - f], jax.numpy.bool_(True))

import jax, jax.numpy as jnp, equinox as eqx, optax
class Net(eqx.Module):
    w: jax.Array
    b: jax.Array
    def __call__(self, x, y):
        return self.w @ x + self.b + y
params = Net(jnp.ones((2, 2)), jnp.zeros(2))
mask = Net(True, False)

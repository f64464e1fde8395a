import jax, jax.numpy as jnp, optax, equinox as eqx


class Pair(eqx.Module):
    w: object
    b: object

    def __call__(self, x, y):
        return self.w @ x + self.b + y


pair = Pair(jnp.ones((2, 2)), jnp.ones(2))
optax.adamw(0.01, weight_decay=0.5, mask=Pair(True, False)).init(pair)

import equinox as eqx, jax, jax.numpy as jnp, optax

class Net(eqx.Module):
    w: jax.Array
    def __call__(self, x, y):
        return self.w @ x + y

adamw = optax.inject_hyperparams(optax.adamw)
state = adamw(learning_rate=1e-3, mask=Net(True)).init(Net(jnp.ones(2)))

import jax, jax.numpy as jnp, equinox as eqx, optax
class Net(eqx.Module):
    w: jax.Array
    b: jax.Array
    def __call__(self, x, y):
        return x
net = Net(jnp.ones((2, 2)), jnp.zeros(2))
mask = Net(True, False)
optax.inject_hyperparams(optax.adamw)(learning_rate=1e-3, mask=mask).init(net)
result = "fixed"

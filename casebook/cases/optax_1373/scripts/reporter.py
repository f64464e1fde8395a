import functools as ft
import equinox as eqx
import jax
import jax.numpy as jnp
import optax
class Net(eqx.Module):
    mlp: eqx.nn.MLP
    def __init__(self, *, key):
        self.mlp = eqx.nn.MLP(in_size=2, out_size="scalar", width_size=2, depth=1, key=key)
    def __call__(self, x, y, key=None):
        return self.mlp(x) + y
net = Net(key=jax.random.key(0))
net(jnp.ones(2), 0)  # OK
params, static = eqx.partition(net, eqx.is_inexact_array)
def get_weights(net):
    return [linear.weight for linear in net.mlp.layers]
weight_mask = eqx.tree_at(get_weights, jax.tree.map(lambda _: False, params), [True] * len(get_weights(net)))
lr = optax.cosine_decay_schedule(0.01, 100)
optim = optax.adamw(lr, eps=1e-3, mask=weight_mask)   # OK without injection
opt_state = optim.init(params)
print("adamw(mask=weight_mask).init: OK")
optim = optax.inject_hyperparams(optax.adamw)(learning_rate=lr, eps=1e-3, mask=weight_mask)
opt_state = optim.init(params)

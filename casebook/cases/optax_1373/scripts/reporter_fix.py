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


params, static = eqx.partition(Net(key=jax.random.key(0)), eqx.is_inexact_array)
get_weights = lambda net: [linear.weight for linear in net.mlp.layers]
weight_mask = eqx.tree_at(get_weights, jax.tree.map(lambda _: False, params), [True, True])
lr = optax.cosine_decay_schedule(0.01, 100)
# The mask is data, not a schedule: name it in static_args (optax 0.2.4 or later).
optim = optax.inject_hyperparams(optax.adamw, static_args="mask")(
    learning_rate=lr, eps=1e-3, mask=weight_mask
)
opt_state = optim.init(params)
grads = jax.tree.map(jnp.ones_like, params)
updates, opt_state = jax.jit(optim.update)(grads, opt_state, params)
print("injected:", sorted(opt_state.hyperparams))

# optax#969, adapted: the report's flax nn.Dense is a dict of arrays here, and
# jax.live_arrays() stands for the backend client's live_buffers(). As in the report, the
# loss is jitted and the optimizer's update is not.
import jax
import jax.numpy as jnp
import optax

x = jax.random.normal(jax.random.PRNGKey(0), (64, 32))
y = x.sum(axis=1, keepdims=True)
params = {"kernel": jnp.zeros((32, 1)), "bias": jnp.zeros(1)}


@jax.jit
def loss(params):
    return jnp.mean((x @ params["kernel"] + params["bias"] - y) ** 2)


opt = optax.radam(learning_rate=1e-2)
state = opt.init(params)
live = []
for _ in range(20):
    grads = jax.grad(loss)(params)
    updates, state = opt.update(grads, state, params)  # eager
    params = optax.apply_updates(params, updates)
    live.append(len(jax.live_arrays()))
print("live arrays after each step:", live)

# optax#1059: a jitted schedule-free step that donates both the params and a fresh state.
import jax
import jax.numpy as jnp
import optax

opt = optax.contrib.schedule_free_sgd(1e-2)
params = {"w": jnp.ones((8, 8)), "b": jnp.zeros(8)}
state = opt.init(params)


def step(params, state):
    updates, state = opt.update(jax.tree.map(jnp.ones_like, params), state, params)
    return optax.apply_updates(params, updates), state


jax.block_until_ready(jax.jit(step, donate_argnums=(0, 1))(params, state))
result = "fixed"

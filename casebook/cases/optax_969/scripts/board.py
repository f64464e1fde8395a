# optax#969: eager radam updates must not leave device arrays behind (adam's do not).
import jax
import jax.numpy as jnp
import optax

opt = optax.radam(1e-3)
params = {"w": jnp.zeros((64, 64)), "b": jnp.zeros(64)}
grads, state = jax.tree.map(lambda p: p + 0.01, params), opt.init(params)
live = []
for _ in range(12):
    updates, state = opt.update(grads, state)  # eager
    params = optax.apply_updates(params, updates)
    live.append(len(jax.live_arrays()))
result = "fixed" if live[-1] == live[1] else "silent"

import jax, jax.numpy as jnp, optax

opt = optax.contrib.schedule_free_sgd(1e-2)
params = {"w": jnp.ones((256, 256)), "b": jnp.zeros(256)}
state, grads = opt.init(params), jax.tree.map(jnp.ones_like, params)
def train_step(params, state):
    updates, state = opt.update(grads, state, params)
    return optax.apply_updates(params, updates), state
params, state = jax.jit(train_step, donate_argnums=(0, 1))(params, state)
print(f"w[0, 0] = {float(params['w'][0, 0]):.4f}")

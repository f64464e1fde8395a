import jax, jax.numpy as jnp, optax

opt = optax.radam(1e-3)
params = {"w": jnp.zeros((256, 256)), "b": jnp.zeros(256)}
grads, state = jax.tree.map(lambda p: p + 0.01, params), opt.init(params)
update = jax.jit(opt.update)  # traced once, then compiled calls
for _ in range(30):
    updates, state = update(grads, state)
    params = optax.apply_updates(params, updates)
print(f"step 30: {len(jax.live_arrays())} live arrays")

import jax, jax.numpy as jnp, optax

opt = optax.radam(1e-3)
params = {"w": jnp.zeros((256, 256)), "b": jnp.zeros(256)}
grads, state = jax.tree.map(lambda p: p + 0.01, params), opt.init(params)
for step in range(1, 31):
    updates, state = opt.update(grads, state)  # eager: no jax.jit
    params = optax.apply_updates(params, updates)
    if step % 10 == 0:
        print(f"step {step}: {len(jax.live_arrays())} live arrays")

import jax, jax.numpy as jnp, optax

drift = lambda u, s, p=None: (u, s.astype(jnp.float32) + 1.0)
drifting = optax.GradientTransformation(lambda p: jnp.zeros((), jnp.float16), drift)
opt = optax.MultiSteps(optax.chain(drifting, optax.sgd(1.0)), every_k_schedule=2)
params = {"w": jnp.ones(3)}
jax.jit(opt.update)(params, opt.init(params), params)

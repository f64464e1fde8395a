import jax, jax.numpy as jnp, optax

opt = optax.MultiSteps(optax.chain(optax.zero_nans(), optax.sgd(0.1)), every_k_schedule=2)
params = {"w": jnp.ones(3)}
state = opt.init(params)
jax.jit(opt.update)({"w": jnp.ones(3)}, state, params)

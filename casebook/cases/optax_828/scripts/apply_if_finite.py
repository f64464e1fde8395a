import jax, jax.numpy as jnp, optax

opt = optax.MultiSteps(optax.apply_if_finite(optax.sgd(0.1), 3), every_k_schedule=2)
params = {"w": jnp.ones(3)}
jax.eval_shape(opt.update, params, opt.init(params), params)

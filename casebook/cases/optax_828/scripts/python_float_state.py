import jax, jax.numpy as jnp, optax

python_float = optax.GradientTransformation(lambda p: 0.5, lambda u, s, p=None: (u, s))
opt = optax.MultiSteps(optax.chain(python_float, optax.sgd(1.0)), every_k_schedule=2)
params = {"w": jnp.ones(3)}
with jax.disable_jit():
    opt.update(params, opt.init(params), params)

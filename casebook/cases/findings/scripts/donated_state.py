import jax, jax.numpy as jnp, optax
params, grads = {"w": jnp.ones((3, 3))}, {"w": jnp.full((3, 3), 0.5)}
for opt in (optax.contrib.prodigy(), optax.contrib.cocob(), optax.scale_by_lbfgs()):
    step = jax.jit(lambda g, s, p, opt=opt: opt.update(g, s, p), donate_argnums=1)
    step(grads, opt.init(params), params)
result = "fixed"

import jax, jax.numpy as jnp, optax
def scanned(opt, params, steps=2):
    step = lambda state, _: (opt.update(params, state, params)[1], None)
    return jax.lax.scan(step, opt.init(params), None, length=steps)[0]

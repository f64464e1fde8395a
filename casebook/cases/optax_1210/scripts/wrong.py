import jax, jax.numpy as jnp, optax, equinox.internal as eqxi
jax.config.update("jax_enable_x64", True)
f, opt, x = lambda x: jnp.sum(x**2), optax.lbfgs(), jnp.ones(3)
def body(carry, _):
    x, s = carry
    v, g = jax.value_and_grad(f)(x)
    u, s = opt.update(g, s, x, value=v, grad=g, value_fn=f)
    return (optax.apply_updates(x, u), s), None
s = eqxi.scan(body, (x, opt.init(x)), None, 3, kind="checkpointed")[0][1]
print(s[2].info.num_linesearch_steps.dtype)

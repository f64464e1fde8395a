import jax, jax.numpy as jnp, optax, equinox.internal as eqxi
jax.config.update("jax_enable_x64", True)
f, solver, x = lambda x: jnp.sum(x**2), optax.lbfgs(), jnp.array([1.0, 2.0, 3.0])
def body(carry, _):
    x, state = carry
    value, grad = jax.value_and_grad(f)(x)
    u, state = solver.update(grad, state, x, value=value, grad=grad, value_fn=f)
    return (optax.apply_updates(x, u), state), None
(x, state), _ = eqxi.scan(body, (x, solver.init(x)), None, length=3, kind="checkpointed")

import jax
import jax.numpy as jnp
import numpy as np
import optax

solver = optax.lbfgs()
saved = jax.tree.map(np.asarray, solver.init(jnp.zeros(3)))  # written by a run without x64

jax.config.update("jax_enable_x64", True)


def f(x):
    return jnp.sum(x**2)


def body(carry, _):
    params, opt_state = carry
    value, grad = jax.value_and_grad(f)(params)
    updates, opt_state = solver.update(grad, opt_state, params, value=value, grad=grad, value_fn=f)
    return (optax.apply_updates(params, updates), opt_state), None


params = jnp.array([1.0, 2.0, 3.0])
opt_state = jax.tree.map(jnp.asarray, saved)  # the checkpoint, restored with x64 on
jax.lax.scan(body, (params, opt_state), length=10)

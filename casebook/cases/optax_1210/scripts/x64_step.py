import jax
import jax.numpy as jnp
import numpy as np
import optax

jax.config.update("jax_enable_x64", True)


def f(x):
    return jnp.sum(x**2)


solver = optax.lbfgs()


def step(carry):
    params, opt_state = carry
    value, grad = jax.value_and_grad(f)(params)
    updates, opt_state = solver.update(grad, opt_state, params, value=value, grad=grad, value_fn=f)
    return optax.apply_updates(params, updates), opt_state


params = jnp.array([1.0, 2.0, 3.0])
carry = (params, solver.init(params))
restored = jax.tree.map(lambda a: jnp.asarray(np.asarray(a)), carry)  # a checkpoint round trip

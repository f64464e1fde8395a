import equinox.internal as eqxi
import jax
import jax.numpy as jnp
import optax  # 0.2.5 or later: the line search keeps the counter's dtype

jax.config.update("jax_enable_x64", True)


def f(x):
    return jnp.sum(x**2)


params = jnp.array([1.0, 2.0, 3.0])
solver = optax.lbfgs()
opt_state = solver.init(params)


def body(carry, _):
    params, opt_state = carry
    value, grad = jax.value_and_grad(f)(params)
    updates, opt_state = solver.update(grad, opt_state, params, value=value, grad=grad, value_fn=f)
    params = optax.apply_updates(params, updates)
    return (params, opt_state), None


carry = (params, opt_state)
(params, opt_state), _ = eqxi.scan(body, carry, None, length=100, kind="checkpointed")
print(params, opt_state[2].info.num_linesearch_steps.dtype)

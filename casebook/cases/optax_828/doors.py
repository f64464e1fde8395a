"""Case 1, optax#828: the reporter's state through three doors.

``MultiSteps(chain(zero_nans(), sgd(0.1)), every_k_schedule=2)`` and one update, entered
three ways: ``jax.jit`` (the reporter's path), ``jax.eval_shape`` (tracing only, no compile)
and ``jax.disable_jit`` (eager, where ``lax.cond`` calls only the branch it needs, so no
check compares the branches; that door asserts ``found_nan`` is still a bool instead).
Written for optax 0.1.7 to the current release.
"""

import jax
import jax.numpy as jnp
import optax

from casebook.releases.program import variant

opt = optax.MultiSteps(optax.chain(optax.zero_nans(), optax.sgd(0.1)), every_k_schedule=2)
params = {"w": jnp.ones(3)}
state = opt.init(params)
grads = {"w": jnp.ones(3)}


@variant("jit")
def jitted() -> None:
    jax.jit(opt.update)(grads, state, params)


@variant("eval_shape")
def traced() -> None:
    jax.eval_shape(opt.update, grads, state, params)


@variant("disable_jit")
def eager() -> None:
    with jax.disable_jit():
        _, new_state = opt.update(grads, state, params)
    dtype = new_state.inner_opt_state[0].found_nan["w"].dtype
    assert dtype == jnp.bool_, f"found_nan silently became {dtype}"

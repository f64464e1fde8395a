"""Case 1, optax#828: what the current merge's cast adds to Fix B's select, and costs.

Since optax 0.2.7 ``MultiSteps`` merges the inner state with
``jnp.astype(jnp.where(emit, nst, st), st.dtype)``. Two small inner transforms probe it:
one returns its float16 state as float32 (a state whose dtype drifts across a step), one
keeps a Python float as its state and runs under ``jax.disable_jit()``. Each variant
returns the dtype of the inner state after one update.
"""

import jax
import jax.numpy as jnp
import optax

from casebook.releases.program import variant

params = {"w": jnp.ones(3)}


def drifting() -> optax.GradientTransformation:
    """State made as float16, returned as float32."""

    def update(updates, state, params=None):
        return updates, state.astype(jnp.float32) + 1.0

    return optax.GradientTransformation(lambda p: jnp.zeros((), jnp.float16), update)


def python_scalar() -> optax.GradientTransformation:
    """State is a Python float, returned unchanged."""
    return optax.GradientTransformation(lambda p: 0.5, lambda u, s, p=None: (u, s))


@variant("dtype drift, jit")
def drift() -> str:
    opt = optax.MultiSteps(optax.chain(drifting(), optax.sgd(1.0)), every_k_schedule=2)
    _, state = jax.jit(opt.update)(params, opt.init(params), params)
    return str(state.inner_opt_state[0].dtype)


@variant("Python float, disable_jit")
def scalar() -> str:
    opt = optax.MultiSteps(optax.chain(python_scalar(), optax.sgd(1.0)), every_k_schedule=2)
    with jax.disable_jit():
        _, state = opt.update(params, opt.init(params), params)
    return str(state.inner_opt_state[0].dtype)

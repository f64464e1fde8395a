"""Case 7 (equinox#854): how many times a jitted function compiles when it is called with a
Python scalar (weakly typed under ``jit``) and then with an array of the same dtype, against
an array both times, on one stack.

Two functions: one jitted optax step (adam on a vector; the scalar scales the loss) and one
jitted diffrax solve (the scalar is the decay rate). Each variant builds a fresh ``jax.jit``,
calls it twice, and returns the size of its compile cache and the seconds each call took (the
first call of a fresh function traces and compiles; so does a second call whose input types
differ).
"""

import time

import diffrax
import jax
import jax.numpy as jnp
import optax

from casebook.releases.program import variant

ADAM = optax.adam(1e-2)
PARAMS = {"w": jnp.ones(8)}
STATE = ADAM.init(PARAMS)
TERM = diffrax.ODETerm(lambda t, y, k: -k * y)


def optax_step():
    """A fresh jitted adam step on ``k * sum(w**2)``."""

    @jax.jit
    def step(params, state, k):
        grads = jax.grad(lambda p: k * jnp.sum(p["w"] ** 2))(params)
        updates, state = ADAM.update(grads, state, params)
        return optax.apply_updates(params, updates), state

    return lambda k: step(PARAMS, STATE, k), step


def diffrax_solve():
    """A fresh jitted solve of ``dy/dt = -k y`` from ``y0 = 1`` to ``t = 1``."""

    @jax.jit
    def solve(k):
        sol = diffrax.diffeqsolve(TERM, diffrax.Tsit5(), 0.0, 1.0, 0.1, jnp.ones(2), args=k)
        return sol.ys[-1]

    return solve, solve


def two_calls(make, first, second):
    """Call a fresh function at ``first``, then at ``second``: its cache size and times."""
    call, jitted = make()
    seconds = []
    for k in (first, second):
        start = time.perf_counter()
        jax.block_until_ready(call(k))
        seconds.append(time.perf_counter() - start)
    return {"compiles": jitted._cache_size(), "seconds": seconds}


@variant("optax step: 0.5, then float32(0.7)")
def optax_mixed():
    return two_calls(optax_step, 0.5, jnp.float32(0.7))


@variant("optax step: float32 twice")
def optax_strong():
    return two_calls(optax_step, jnp.float32(0.5), jnp.float32(0.7))


@variant("diffrax solve: 1.0, then float32(2.0)")
def diffrax_mixed():
    return two_calls(diffrax_solve, 1.0, jnp.float32(2.0))


@variant("diffrax solve: float32 twice")
def diffrax_strong():
    return two_calls(diffrax_solve, jnp.float32(1.0), jnp.float32(2.0))

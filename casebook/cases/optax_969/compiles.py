"""Case 6, optax#969: backend compilations per eager step of ``radam`` (and ``adam``).

One program per release, so that no variant inherits another's compiled executables: each
variant steps its optimizer eagerly ``WARMUP`` times, then counts the compilations that jax
reports (``jax.monitoring``) over ``STEPS`` more.
"""

import jax
import jax.numpy as jnp
import optax

from casebook.releases.program import variant

WARMUP, STEPS = 3, 10
COMPILES = [0]


def _count(event: str, duration_secs: float, **kwargs: str | int) -> None:
    if "backend_compile" in event:
        COMPILES[0] += 1


jax.monitoring.register_event_duration_secs_listener(_count)


def per_step(opt):
    """Compilations per eager step of ``opt`` after the warm-up."""
    params = {"w": jnp.zeros((256, 256)), "b": jnp.zeros(256)}
    grads, state = jax.tree_util.tree_map(lambda p: p + 0.01, params), opt.init(params)
    for i in range(WARMUP + STEPS):
        if i == WARMUP:
            before = COMPILES[0]
        updates, state = opt.update(grads, state)
        params = optax.apply_updates(params, updates)
    return (COMPILES[0] - before) / STEPS


@variant("adam")
def adam():
    return per_step(optax.adam(1e-3))


@variant("radam")
def radam():
    return per_step(optax.radam(1e-3))

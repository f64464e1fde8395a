"""Case 6, optax#969: backend compilations per eager step of ``radam`` (and ``adam``).

One program per release, so that no variant inherits another's compiled executables: each
variant steps its optimizer eagerly ``WARMUP`` times, then counts the compilations that jax
reports (``jax.monitoring``) over ``STEPS`` more. ``radam, what compiles`` names them, from
jax's own log of its compilations (``jax_log_compiles``); ``0.999 ** step`` runs the one
line of radam that compiles on today's releases, ``b2 ** count``, alone.
"""

import collections
import logging
import re

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


COMPILING = re.compile(r"Compiling (?:jit\()?(\w+)")
"""jax's log line of one compilation, in the wording of jax 0.4.x and of today's jax."""


class _Names(logging.Handler):
    """Counts the computations jax logs as it compiles them, by name."""

    def __init__(self) -> None:
        super().__init__()
        self.names: collections.Counter[str] = collections.Counter()

    def emit(self, record: logging.LogRecord) -> None:
        found = COMPILING.match(record.getMessage())
        if found:
            self.names[found.group(1)] += 1


@variant("radam, what compiles")
def radam_names():
    """The computations an eager ``radam`` step compiles, by name, per step, over ``STEPS``
    steps whose counts no variant before it has reached (a compilation is cached per count)."""
    opt = optax.radam(1e-3)
    params = {"w": jnp.zeros((256, 256)), "b": jnp.zeros(256)}
    grads, state = jax.tree_util.tree_map(lambda p: p + 0.01, params), opt.init(params)
    for _ in range(WARMUP + STEPS):  # past the step counts that "radam" has compiled
        updates, state = opt.update(grads, state)
    names, logger = _Names(), logging.getLogger("jax")
    jax.config.update("jax_log_compiles", True)
    logger.addHandler(names)
    try:
        for _ in range(STEPS):
            updates, state = opt.update(grads, state)
    finally:
        logger.removeHandler(names)
        jax.config.update("jax_log_compiles", False)
    return {name: n / STEPS for name, n in sorted(names.names.items())}


@variant("0.999 ** step")
def power_of_step():
    """Compilations per eager ``b2 ** count`` (a Python float to a concrete int32 step), as
    radam computes it: once for ``STEPS`` new steps, then for the same steps again."""
    steps = [jnp.asarray(step, jnp.int32) for step in range(1000, 1000 + STEPS)]
    before = COMPILES[0]
    for step in steps:
        0.999**step
    new = COMPILES[0] - before
    for step in steps:
        0.999**step
    return {"new steps": new / STEPS, "the same steps again": (COMPILES[0] - before - new) / STEPS}

"""Case 1, optax#828: one mini-step of three ``MultiSteps`` classes, timed in one process.

Runs on optax 0.1.9 and loads three copies of ``optax/_src/wrappers.py`` as separate
modules: 0.1.7's (the inner optimizer behind a ``lax.cond``), Fix A's and Fix B's (the
inner optimizer on every mini-step). Inputs: ``wrappers`` (variant name to file path),
``state_utils_0_1_7`` (a path), ``n`` (float32 parameters, in 4 leaves), ``k`` and
``rounds``. The inner optimizer is ``chain(zero_nans(), adam(1e-3))``.
"""

import re

import jax
import jax.numpy as jnp
import optax

from casebook import bench, releases
from casebook.releases.program import inputs, variant

jax.config.update("jax_enable_compilation_cache", False)  # time compiles, not cache reads
GIVEN = inputs()
N, K, LEAVES = GIVEN["n"], GIVEN["k"], 4

# 0.1.7's wrappers.py imports optax._src.state_utils, which 0.1.8 moved to
# optax.tree_utils (optax 31a0c8a0): load 0.1.7's own copy of that module first.
releases.load_module_file(GIVEN["state_utils_0_1_7"], "optax._src.state_utils")
classes = {
    name: releases.load_module_file(path, "wrappers_" + re.sub(r"\W", "_", name)).MultiSteps
    for name, path in GIVEN["wrappers"].items()
}
params = {f"w{i}": jnp.zeros(N // LEAVES, jnp.float32) for i in range(LEAVES)}
grads = {f"w{i}": jnp.full(N // LEAVES, 0.01 * (i + 1)) for i in range(LEAVES)}
optimizers = {
    name: cls(optax.chain(optax.zero_nans(), optax.adam(1e-3)), every_k_schedule=K)
    for name, cls in classes.items()
}


def stepper(opt):
    """One jitted mini-step of ``opt`` as a function of no arguments (state kept inside)."""
    update, box = jax.jit(opt.update), {"state": opt.init(params)}

    def step():
        updates, box["state"] = update(grads, box["state"], params)
        return updates

    return step


steps = {name: stepper(opt) for name, opt in optimizers.items()}


@variant("compile seconds")
def compile_seconds() -> dict:
    # Cold compiles clear jax's caches: run before any step is timed.
    return {
        name: bench.compile_seconds(opt.update, grads, opt.init(params), params, repeats=1).median
        for name, opt in optimizers.items()
    }


@variant("fix A == fix B")
def fixes_agree() -> dict:
    # Two accumulation cycles of each fix from its initial state, before any timing;
    # the last mini-step of a cycle emits.
    for _ in range(2 * K - 1):
        steps["fix A"]()
        steps["fix B"]()
    a, b = steps["fix A"](), steps["fix B"]()
    return {
        "bitwise equal": all(bool(jnp.array_equal(a[key], b[key])) for key in a),
        "finite": all(bool(jnp.isfinite(v).all()) for v in (*a.values(), *b.values())),
        "nonzero": all(bool((v != 0).all()) for v in a.values()),
    }


@variant("mini-step")
def mini_step() -> dict:
    copy, copy_bytes = bench.copy_reference(16 * N)  # a buffer of 16N bytes
    variants = {**steps, "copy": copy}
    timings = bench.interleave(variants, rounds=GIVEN["rounds"], warmup=1, calls_per_round=K)
    return {"timings": timings.to_dict(), "copy_bytes": copy_bytes}

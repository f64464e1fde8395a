"""Case 6, optax#969: the price of Fix A, ``jnp.where`` against ``lax.cond``, in one process.

Runs on optax 0.2.2 (on the jax of the run): ``radam`` as released (its ``lax.cond``) and
``radam`` with Fix A applied to a private copy of ``optax/_src/transform.py`` (both branches
computed, then ``jnp.where``; :data:`casebook.cases.optax_969.leak.FIX_A`). Inputs: ``n``
(float32 parameters, in 4 leaves), ``rounds`` and ``eager_rounds``.
"""

import jax
import jax.numpy as jnp
import optax

from casebook import bench
from casebook.cases.optax_969.leak import radam_fix_a
from casebook.releases.program import inputs, variant

jax.config.update("jax_enable_compilation_cache", False)  # time compiles, not cache reads
GIVEN = inputs()
N, LEAVES = GIVEN["n"], 4
params = {f"w{i}": jnp.zeros(N // LEAVES, jnp.float32) for i in range(LEAVES)}
grads = {f"w{i}": jnp.full(N // LEAVES, 0.01 * (i + 1)) for i in range(LEAVES)}
optimizers = {"where (fix A)": radam_fix_a(), "cond (0.2.2)": optax.radam(1e-3)}


def stepper(opt, jit=True):
    """One update of ``opt`` as a function of no arguments (state kept inside)."""
    update, box = (jax.jit(opt.update) if jit else opt.update), {"state": opt.init(params)}

    def step():
        updates, box["state"] = update(grads, box["state"])
        return updates

    return step


@variant("compile seconds")
def compile_seconds() -> dict:
    # Cold compiles clear jax's caches: run before any step is timed.
    return {
        name: bench.compile_seconds(opt.update, grads, opt.init(params), repeats=1).median
        for name, opt in optimizers.items()
    }


@variant("where == cond")
def agree() -> dict:
    # Ten jitted steps each: radam's switch (rho >= 5) comes at step 6 with the default b2.
    steps = {name: stepper(opt) for name, opt in optimizers.items()}
    same = []
    for _ in range(10):
        a, b = (step() for step in steps.values())
        same.append(all(bool(jnp.array_equal(a[k], b[k])) for k in a))
    return {"bitwise equal at every step": all(same), "steps": len(same)}


@variant("jit step")
def jit_step() -> dict:
    steps = {name: stepper(opt) for name, opt in optimizers.items()}
    return bench.interleave(steps, rounds=GIVEN["rounds"], warmup=2).to_dict()


@variant("eager step")
def eager_step() -> dict:
    steps = {name: stepper(opt, jit=False) for name, opt in optimizers.items()}
    return bench.interleave(steps, rounds=GIVEN["eager_rounds"], warmup=1).to_dict()

"""Case 5 (diffrax#521): the optimizer alone, without the ODE: ``MultiSteps(adam)``
against a hand-written gradient accumulator, per mini-step, on ``N`` float32 parameters.

Inputs: ``N`` (parameters, in four leaves), ``K`` (mini-steps per update) and ``ROUNDS``.
Each call of a variant is one mini-step with the same gradients. ``MultiSteps`` runs the
inner ``adam`` on every mini-step and keeps or discards its result; the manual
accumulator adds the gradient on ``K - 1`` mini-steps and runs ``adam`` on the last.
A copy of a ``16 N``-byte buffer, timed in the same rounds, is the bandwidth reference.
"""

import jax
import jax.numpy as jnp
import optax

from casebook import bench
from casebook.releases.program import inputs, variant

N, K, ROUNDS = inputs()["N"], inputs()["K"], inputs()["ROUNDS"]
adam = optax.adam(1e-3)
multisteps = optax.MultiSteps(adam, every_k_schedule=K)
params = {f"w{i}": jnp.zeros(N // 4, jnp.float32) for i in range(4)}
grads = {f"w{i}": jnp.full(N // 4, 0.01 * (i + 1), jnp.float32) for i in range(4)}


@jax.jit
def ms_step(g, p, s):
    u, s = multisteps.update(g, s, p)
    return optax.apply_updates(p, u), s


@jax.jit
def accumulate(g, acc):
    return jax.tree.map(jnp.add, acc, g)


@jax.jit
def emit(g, acc, p, s):
    mean = jax.tree.map(lambda a, b: (a + b) / K, acc, g)
    u, s = adam.update(mean, s, p)
    return optax.apply_updates(p, u), s, jax.tree.map(jnp.zeros_like, acc)


def multisteps_call(box):
    """One mini-step of ``MultiSteps``; ``box["ms"]`` holds (params, state)."""
    box["ms"] = ms_step(grads, *box["ms"])
    return box["ms"][0]


def manual_call(box):
    """One mini-step of the manual accumulator; ``box["manual"]`` holds
    (params, adam state, accumulator, mini-step index)."""
    p, s, acc, i = box["manual"]
    if i == K - 1:
        p, s, acc = emit(grads, acc, p, s)
    else:
        acc = accumulate(grads, acc)
    box["manual"] = (p, s, acc, (i + 1) % K)
    return acc


def fresh():
    """Both variants' states before the first mini-step."""
    zeros = jax.tree.map(jnp.zeros_like, params)
    return {
        "ms": (params, multisteps.init(params)),
        "manual": (params, adam.init(params), zeros, 0),
    }


@variant("timed")
def timed():
    box = fresh()
    copy, copy_bytes = bench.copy_reference(16 * N)
    variants = {
        "MultiSteps": lambda: multisteps_call(box),
        "manual": lambda: manual_call(box),
        "copy": copy,
    }
    timings = bench.interleave(variants, rounds=ROUNDS, warmup=2, calls_per_round=K)
    return {"timings": timings.to_dict(), "copy_bytes": copy_bytes}


@variant("same parameters")
def same_parameters():
    """Both variants from fresh states for two updates (2 K mini-steps): the largest
    difference of their parameters, and how far MultiSteps moved them."""
    box = fresh()
    for _ in range(2 * K):
        multisteps_call(box)
        manual_call(box)
    a, b = box["ms"][0], box["manual"][0]
    return {
        "max_diff": max(float(jnp.abs(a[k] - b[k]).max()) for k in a),
        "moved": float(jnp.abs(a["w0"]).max()),
    }

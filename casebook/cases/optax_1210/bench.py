"""The cost of LBFGS loops on optax 0.2.4 in 64-bit mode (optax#1210): a ``lax.scan`` of all
steps against a Python loop of jitted steps, and the scan with Fix B's user cast.

Rosenbrock's function from x0 = (-1.2, 1, -1.2, 1, ...) at two sizes, D = 10 (80 steps per
call) and a large D (50 steps per call). The variants run in order: cold compile times first
(they clear jax's caches), then the timings of each size (``bench.interleave``, so with an
A/A control, divided into time per step), then how often each function was traced, and how
much the cast changed the result. Inputs: ``rounds``, the timed rounds at each size (default
30 and 16), and ``scan_repeats``, the scans per timed call at D = 10 (default 20). Run it with
x64 on (``x64=True``).
"""

import collections

import jax
import jax.numpy as jnp
import numpy as np
import optax

from casebook import bench
from casebook.releases.program import inputs, variant

jax.config.update("jax_enable_compilation_cache", False)  # time compiles, not cache reads
ROUNDS = inputs().get("rounds", [30, 16])  # timed rounds at D = 10 and at the large D
SCAN_REPEATS = inputs().get("scan_repeats", 20)  # scans per timed call at D = 10
LARGE = bench.scale_for_device(cpu=10_000, gpu=1_000_000)
SIZES = {"D = 10": (10, 80), f"D = {LARGE:,}": (LARGE, 50)}  # dimension, steps per call
SMALL_D, LARGE_D = SIZES


def rosenbrock(x):
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


solver = optax.lbfgs()
traces: collections.Counter[str] = (
    collections.Counter()
)  # traces per function name: a jitted function's compilations
finals: dict[
    tuple[int, str], object
] = {}  # (size, variant) -> parameters after the last timed call


def make_step(name, cast):
    def step(x, s):
        traces[name] += 1
        value, grad = jax.value_and_grad(rosenbrock)(x)
        u, new_s = solver.update(grad, s, x, value=value, grad=grad, value_fn=rosenbrock)
        if cast:  # Fix B, user form
            new_s = jax.tree.map(lambda new, old: new.astype(old.dtype), new_s, s)
        return optax.apply_updates(x, u), new_s

    return step


def make_scan(name, cast, steps):
    step = make_step(name + " (body)", cast)

    def run(x, s):
        traces[name] += 1
        return jax.lax.scan(lambda c, _: (step(*c), None), (x, s), length=steps)[0]

    return run


def start(size, cast=False):
    """The starting point and state; with the cast, a strongly typed state (a NumPy round
    trip of init's), so that every step sees the same input types."""
    d, _ = SIZES[size]
    x0 = jnp.tile(jnp.array([-1.2, 1.0]), d // 2)
    s0 = solver.init(x0)
    return x0, jax.tree.map(lambda a: jnp.asarray(np.asarray(a)), s0) if cast else s0


def scan_variant(size, cast=False, repeats=1):
    """One call: the whole scan of a size's steps, jitted, run ``repeats`` times from the start
    (so that a timed call at D = 10 lasts milliseconds, not a fraction of one)."""
    name = "lax.scan + cast" if cast else "lax.scan"
    scan, init = jax.jit(make_scan(f"{size}: {name}", cast, SIZES[size][1])), start(size, cast)

    def call():
        for _ in range(repeats):
            finals[size, name] = jax.block_until_ready(scan(*init)[0])
        return finals[size, name]

    return call


def loop_variant(size):
    """One call: a Python loop over a size's steps, each a call of the jitted step."""
    jstep, init, steps = (
        jax.jit(make_step(f"{size}: Python loop", False)),
        start(size),
        SIZES[size][1],
    )

    def call():
        x, s = init
        for _ in range(steps):
            x, s = jstep(x, s)
        finals[size, "Python loop"] = x
        return x

    return call


def per_step(timings, size, steps):
    """Timings of whole calls as JSON, divided into time per optimisation step; ``steps``
    maps each variant to the steps one of its calls makes (the A/A control: as its original)."""
    data, per_call = timings.to_dict(), lambda name: steps[name.removesuffix(" (A/A)")]
    for key in ("wall", "cpu", "faults"):
        data[key] = {name: [v / per_call(name) for v in vs] for name, vs in data[key].items()}
    return {"size": size, "steps": SIZES[size][1], "timings": data}


@variant("compile")
def compile_times():
    """Cold compile (trace, lower, XLA) of a whole scan and of one step, at the large size."""
    x0, s0 = start(LARGE_D)
    whole = bench.compile_seconds(make_scan("-", False, SIZES[LARGE_D][1]), x0, s0, repeats=1)
    one = bench.compile_seconds(make_step("-", False), x0, s0, repeats=1)
    traces.clear()
    seconds = lambda c: {"total": c.median, "trace+lower": c.lower_samples[0]}
    return {"lax.scan": seconds(whole), "one step": seconds(one)}


@variant("D = 10")
def small():
    steps, repeats = SIZES[SMALL_D][1], SCAN_REPEATS
    variants = {
        "lax.scan": scan_variant(SMALL_D, repeats=repeats),
        "lax.scan + cast": scan_variant(SMALL_D, cast=True, repeats=repeats),
        "Python loop": loop_variant(SMALL_D),  # last: the variant after it runs on colder caches
    }
    per_call = {
        "lax.scan": steps * repeats,
        "Python loop": steps,
        "lax.scan + cast": steps * repeats,
    }
    return per_step(bench.interleave(variants, rounds=ROUNDS[0], warmup=1), SMALL_D, per_call)


@variant("large D")
def large():
    variants = {"lax.scan": scan_variant(LARGE_D), "Python loop": loop_variant(LARGE_D)}
    steps = SIZES[LARGE_D][1]
    per_call = {"lax.scan": steps, "Python loop": steps}
    return per_step(bench.interleave(variants, rounds=ROUNDS[1], warmup=1), LARGE_D, per_call)


@variant("traces")
def traced():
    """How often each function was traced; "(body)" is the step inside a scan."""
    return dict(traces)


@variant("cast changes nothing")
def cast_difference():
    """Largest difference the cast makes to the parameters after the scan at D = 10."""
    with_cast, without = finals[SMALL_D, "lax.scan + cast"], finals[SMALL_D, "lax.scan"]
    return float(jnp.abs(with_cast - without).max())

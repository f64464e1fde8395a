"""Case 6, optax#969: what an eager ``radam`` step leaves alive, with each fix and without.

On any release: run with ``releases.run_program("optax_969.leak", target)``.

Each variant runs ``STEPS`` eager ``update`` + ``apply_updates`` steps (no ``jit``) on a
two-leaf model after ``WARMUP`` steps, and returns the growth per step of
``jax.live_arrays()``: buffers and bytes, and the entries of jax's cache of traced ``cond``
branches where the running jax has one. It also returns the independent reference the
page checks the growth against: the leaves and bytes of one copy of the optimizer's first
moment (``mu_hat`` has its shape), read from the state, not from the counts.

The fixes are applied in this process, to the release it runs on:

* **Fix A** (optax PR #974): the one line of ``scale_by_radam`` that calls ``lax.cond``
  becomes a select of both branches' results with ``jnp.where``, applied as a
  :class:`~casebook.releases.Patch` to the source of ``optax/_src/transform.py`` of the
  running optax and executed as a private module;
* **Fix B** (jax PR #22610): the cache decorator of jax's branch tracing is taken away, the
  line that fix deleted, by binding the undecorated function where ``lax.cond`` looks it up.
"""

import importlib.util
import sys

import jax
import jax.numpy as jnp
import optax

from casebook.releases import Patch
from casebook.releases.program import inputs, variant

GIVEN = {"steps": 20, "warmup": 2, **inputs()}
STEPS, WARMUP = GIVEN["steps"], GIVEN["warmup"]

COND_LINE = "updates = jax.lax.cond("
WHERE_LINE = (
    "updates = (lambda p, t, f, x: jax.tree_util.tree_map("
    "lambda u, m: jnp.where(p, u, m), t(x), f(x)))("
)
FIX_A = Patch("optax/_src/transform.py", COND_LINE, WHERE_LINE)
"""Fix A, one line: compute both branches and select, as optax 0.2.3 does."""


def cond_cache():
    """jax's cache of traced ``cond`` branches, or None where the running jax has none."""
    try:
        from jax._src.lax.control_flow import common
    except ImportError:
        return None
    traced = getattr(common, "_initial_style_jaxprs_with_common_consts", None)
    return traced if hasattr(traced, "cache_info") else None


def measure(opt, step_fn=None):
    """Growth per step of live buffers, bytes and cache entries over ``STEPS`` eager steps."""
    params = {"w": jnp.zeros((256, 256)), "b": jnp.zeros(256)}
    grads = jax.tree_util.tree_map(lambda p: jnp.full_like(p, 0.01), params)
    state = opt.init(params)
    step_fn = step_fn or opt.update
    cache = cond_cache()

    def snapshot():
        live = jax.live_arrays()
        entries = cache.cache_info().currsize if cache else 0
        return len(live), sum(a.nbytes for a in live), entries

    for i in range(WARMUP + STEPS):
        if i == WARMUP:
            before = snapshot()
        updates, state = step_fn(grads, state, params)
        params = optax.apply_updates(params, updates)
    after = snapshot()
    moment = state[0].mu  # radam and adam: chain(scale_by_..., scale); mu_hat has its shape
    return {
        "buffers/step": (after[0] - before[0]) / STEPS,
        "bytes/step": (after[1] - before[1]) / STEPS,
        "cache entries/step": (after[2] - before[2]) / STEPS,
        "reference leaves": len(jax.tree_util.tree_leaves(moment)),
        "reference bytes": sum(x.nbytes for x in jax.tree_util.tree_leaves(moment)),
    }


def radam_fix_a(learning_rate=1e-3):
    """``radam`` of the running optax with Fix A applied to a private copy of its module."""
    from optax._src import transform

    source = FIX_A.apply(open(transform.__file__).read())
    spec = importlib.util.spec_from_loader("transform_fix_a", loader=None)
    module = importlib.util.module_from_spec(spec)
    exec(compile(source, transform.__file__, "exec"), module.__dict__)
    return optax.chain(module.scale_by_radam(), optax.scale(-learning_rate))


@variant("what stays alive")
def alive():
    """After 3 eager steps: the cache's new entries and its bound, and the ``lambda`` s of
    ``update_fn`` that are still alive, with what each closes over."""
    import gc
    import types

    opt, params = optax.radam(1e-3), {"w": jnp.zeros((256, 256)), "b": jnp.zeros(256)}
    state = opt.init(params)
    cache = cond_cache()
    start = cache.cache_info().currsize if cache else 0
    for _ in range(3):
        _, state = opt.update(params, state)
    gc.collect()
    kept = [
        f
        for f in gc.get_objects()
        if isinstance(f, types.FunctionType)
        and f.__qualname__.endswith("update_fn.<locals>.<lambda>")
        and f.__code__.co_filename.endswith("transform.py")
        and f.__closure__
    ]
    held = {
        name: {k: f"{v.dtype}{list(v.shape)}" for k, v in cell.cell_contents.items()}
        for f in kept[:1]
        for name, cell in zip(f.__code__.co_freevars, f.__closure__)
    }
    entries = cache.cache_info().currsize - start if cache else 0
    bound = cache.cache_info().maxsize if cache else None  # an LRU: it evicts past this
    return {
        "new cache entries": entries,
        "lambdas alive": len(kept),
        "first closes over": held,
        "cache max entries": bound,
    }


@variant("radam")
def radam():
    return measure(optax.radam(1e-3))


@variant("adam")
def adam():
    return measure(optax.adam(1e-3))


@variant("radam, jit")
def radam_jit():
    opt = optax.radam(1e-3)
    return measure(opt, jax.jit(opt.update))


@variant("radam, fix A")
def radam_a():
    return measure(radam_fix_a())


@variant("radam, fix B")
def radam_b():
    cached = cond_cache()
    if cached is not None:  # the era's jax: take the decorator away, as jax 0.4.31 did
        for name in ("jax._src.lax.control_flow.common", "jax._src.lax.control_flow.conditionals"):
            setattr(sys.modules[name], cached.__name__, cached.__wrapped__)
    try:
        return measure(optax.radam(1e-3))
    finally:
        if cached is not None:
            for name in (
                "jax._src.lax.control_flow.common",
                "jax._src.lax.control_flow.conditionals",
            ):
                setattr(sys.modules[name], cached.__name__, cached)

"""check_optimizer on generated set-ups (Hypothesis): no error of its own making, and it
agrees with a real run.

Two properties, seeded (``derandomize=True``) and bounded (150 set-ups and 80 argument
sets, about 10 s); ``CASEBOOK_HYPOTHESIS_EXAMPLES=5000`` runs that many set-ups instead
(and a quarter as many argument sets):

* **arguments**: whatever the arguments (steps, grads_dtype, update_params, strict,
  update_kwargs, grads next to grads_dtype, params without a float leaf), the check
  returns a report, raises :class:`OptimizerCheckError` (``strict=True``), or raises a
  ``TypeError``/``ValueError`` of its own (raised in ``casebook/check``, starting
  ``check_optimizer``, naming an argument), exactly when the arguments break a rule of
  its docstring.
* **agreement**: params are pytrees (dicts, lists, tuples, nested) of f32, bf16 and f16
  arrays of 0 to 2 dimensions (f64 only under x64), int and bool arrays, ``None`` and
  leaves that are no arrays (a string, a Python float, a function); masks are trees,
  functions, frozen dataclasses and Equinox modules; grads are the default ones, of a
  ``grads_dtype``, or given (mixed precision among them); ``init_params`` and ``update``
  without params are drawn too.  The oracle is the corpus's (:func:`casebook.maintainer.corpus.oracle`:
  a real ``init``, real ``update`` steps whose state must keep its types, a ``lax.scan``
  of them traced by ``jax.jit``), and for a mask under ``inject_hyperparams``, which
  optax calls with the step count, whether that gives the tree that ``mask(params)``
  gives.  **Agree** means: a set-up that fails for real has a problem (error or
  warning) in the report; one that runs cleanly has no error (notes and warnings are
  allowed: the check may say more than one run shows).  A set-up that the check refuses
  with a documented error is counted apart, as refused.

The counts print as one line (``pytest -s``) and are part of any failure's message.
"""

from __future__ import annotations

import dataclasses
import os
import traceback
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
from hypothesis import HealthCheck, event, given, settings, strategies as st

import casebook.check
from casebook.check import MAX_EXPLICIT_STEPS, CheckReport, OptimizerCheckError, check_optimizer
from casebook.maintainer import corpus
from casebook.maintainer.corpus._setups import Built, grads_like

READS_PAGES = False

SCALE = int(os.environ.get("CASEBOOK_HYPOTHESIS_EXAMPLES", "0"))
CHECK_DIR = str(Path(casebook.check.__file__).parent)
X64 = bool(jax.config.read("jax_enable_x64"))
FLOATS = [jnp.float32, jnp.bfloat16, jnp.float16] + ([jnp.float64] if X64 else [])
ARGUMENTS = ("optimizer", "params", "grads", "steps", "update_kwargs", "init_params", "strict")
ARGUMENTS += ("update_params", "grads_dtype")


def _settings(examples: int) -> settings:
    return settings(
        max_examples=examples,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )


def _own_error(error: BaseException) -> bool:
    """A TypeError/ValueError that the check raised itself, about an argument."""
    last = traceback.extract_tb(error.__traceback__)[-1].filename
    text = str(error)
    return (
        type(error) in (TypeError, ValueError)
        and last.startswith(CHECK_DIR)
        and text.startswith("check_optimizer")
        and any(name in text for name in ARGUMENTS + ("GradientTransformation",))
    )


# ------------------------------------------------------------------- the set-ups


def _array(shape: tuple[int, ...], dtype: Any) -> jax.Array:
    return (jnp.arange(int(np.prod(shape)), dtype=jnp.float32).reshape(shape) / 4 + 1).astype(dtype)


def _arrays(dtypes: list[Any]) -> st.SearchStrategy[jax.Array]:
    shapes = st.sampled_from([(), (1,), (3,), (2, 3)])
    return st.builds(_array, shapes, st.sampled_from(dtypes))


FLOAT_LEAF = _arrays(FLOATS)
LEAF = st.one_of(
    FLOAT_LEAF,
    FLOAT_LEAF,
    FLOAT_LEAF,
    _arrays([jnp.int32, jnp.bool_]),
    st.none(),
    st.sampled_from(["mlp", 0.5, jax.nn.relu]),
)
TREES = st.recursive(
    LEAF,
    lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=3),
        st.tuples(inner, inner),
        st.dictionaries(st.sampled_from(["a", "b", "w"]), inner, min_size=1, max_size=3),
    ),
    max_leaves=5,
)


@dataclasses.dataclass(frozen=True)
class FixedMask:
    """A mask as a frozen dataclass whose ``__call__`` returns the same tree always."""

    tree: Any

    def __call__(self, params: Any) -> Any:
        return self.tree


class ModuleMask(eqx.Module):
    """A mask as an Equinox module (a callable pytree) that returns its tree."""

    tree: Any

    def __call__(self, params: Any) -> Any:
        return self.tree


def by_ndim(params: Any) -> Any:
    """A mask function of the params: weight decay on the matrices."""
    return jax.tree.map(lambda x: getattr(x, "ndim", 0) > 1, params)


OPTIMIZERS = ["adamw-mask", "sgd", "sgd-momentum", "adam", "lion", "multisteps"]
OPTIMIZERS += ["chain-clip-adam", "inject-adam", "inject-adamw-mask", "inject-clip", "no-params"]


def _sign_descent(updates: Any, state: Any) -> tuple[Any, Any]:
    """An ``update`` that takes no params argument: code can only call it without."""
    return jax.tree.map(lambda g: -0.1 * jnp.sign(g), updates), state


def _optimizer(name: str, mask: Any) -> Any:
    return {
        "sgd": lambda: optax.sgd(0.1),
        "sgd-momentum": lambda: optax.sgd(0.1, momentum=0.9),
        "adam": lambda: optax.adam(1e-3),
        "adamw-mask": lambda: optax.adamw(1e-3, weight_decay=0.1, mask=mask),
        "lion": lambda: optax.lion(1e-4),
        "multisteps": lambda: optax.MultiSteps(optax.adam(1e-3), every_k_schedule=2),
        "chain-clip-adam": lambda: optax.chain(optax.clip_by_global_norm(1.0), optax.adam(1e-3)),
        "inject-adam": lambda: optax.inject_hyperparams(optax.adam)(learning_rate=1e-3),
        "inject-adamw-mask": lambda: optax.inject_hyperparams(optax.adamw)(1e-3, mask=mask),
        "inject-clip": lambda: optax.inject_hyperparams(optax.clip_by_global_norm)(max_norm=1.0),
        "no-params": lambda: optax.GradientTransformation(optax.init_empty_state, _sign_descent),
    }[name]()


@dataclasses.dataclass
class SetUp:
    """One generated set-up: the check's arguments and what the real run gets."""

    name: str
    optimizer: Any
    params: Any
    grads: Any  # given to the check (None: the default grads)
    grads_dtype: Any
    real_grads: Any  # what the real run gets
    init_params: Any
    update_params: bool
    steps: int | None
    real_update_params: bool  # how the real code calls update (never with params for no-params)
    schedule_mask: Any = None  # a callable mask that inject_hyperparams calls


@st.composite
def set_ups(draw: st.DrawFn) -> SetUp:
    params = draw(TREES)
    floats = [x for x in jax.tree.leaves(params) if getattr(x, "dtype", None) in FLOATS]
    if not floats and draw(st.integers(0, 3)):
        params = {"w": draw(FLOAT_LEAF), "rest": params}  # fewer set-ups without arrays
    leaves, treedef = jax.tree.flatten(params)
    bools = draw(st.lists(st.booleans(), min_size=len(leaves), max_size=len(leaves)))
    tree = jax.tree.unflatten(treedef, bools)
    kind = draw(st.sampled_from(["tree", "function", "dataclass", "module"]))
    mask = {"tree": tree, "function": by_ndim, "dataclass": FixedMask(tree)}.get(kind)
    mask = ModuleMask(tree) if mask is None else mask
    name = draw(st.sampled_from(OPTIMIZERS))
    grads_mode = draw(st.sampled_from(["default", "default", "dtype", "given", "given"]))
    dtype = draw(st.sampled_from([None, jnp.float32, jnp.bfloat16, jnp.float16]))
    grads = grads_like(params, dtype) if grads_mode == "given" else None
    grads_dtype = dtype if grads_mode == "dtype" else None
    filtered = draw(st.booleans())
    update_params = draw(st.sampled_from([True, True, False]))
    return SetUp(
        f"{name}, mask {kind}" if "mask" in name else name,
        _optimizer(name, mask),
        params,
        grads,
        grads_dtype,
        grads_like(params, dtype if grads_mode != "default" else None),
        eqx.filter(params, eqx.is_inexact_array) if filtered else None,
        update_params,
        draw(st.sampled_from([None, None, None, 1, 2])),
        update_params and name != "no-params",
        mask if name == "inject-adamw-mask" and callable(mask) else None,
    )


# ------------------------------------------------------------------- the oracle


def _same_tree(a: Any, b: Any) -> bool:
    (la, ta), (lb, tb) = jax.tree.flatten(a), jax.tree.flatten(b)
    return ta == tb and all(np.array_equal(x, y) for x, y in zip(la, lb))


def real_failure(setup: SetUp, steps: int) -> str | None:
    """None if the set-up runs cleanly for real, else why not."""
    if setup.schedule_mask is not None:  # inject_hyperparams calls it with the step count
        mask = setup.schedule_mask
        init = setup.params if setup.init_params is None else setup.init_params
        try:
            for_count, for_params = mask(jnp.zeros([], jnp.int32)), mask(init)
        except Exception as error:  # the mask fails on one of them: so does optax
            return f"the mask fails: {type(error).__name__}"
        if not _same_tree(for_count, for_params):
            return "silent: inject_hyperparams gives adamw another mask than mask(params)"
    built = Built(
        setup.optimizer,
        setup.params,
        setup.real_grads,
        setup.init_params,
        with_params=setup.real_update_params,
    )
    return corpus.oracle(built, steps)


# ------------------------------------------------------------------- the properties


def test_the_check_agrees_with_a_real_run_on_generated_set_ups():
    counts: Counter[str] = Counter()
    disagreements: list[str] = []

    @_settings(SCALE or 150)
    @given(set_ups())
    def agrees(setup: SetUp) -> None:
        counts["tried"] += 1
        try:
            report = check_optimizer(
                setup.optimizer,
                setup.params,
                setup.grads,
                grads_dtype=setup.grads_dtype,
                init_params=setup.init_params,
                update_params=setup.update_params,
                steps=setup.steps,
            )
        except (TypeError, ValueError) as error:
            counts["crashes" if not _own_error(error) else "refused"] += 1
            assert _own_error(error), "".join(traceback.format_exception(error))
            event(f"refused: {str(error).split(':')[1][:40]}")
            return
        failure = real_failure(setup, setup.steps or max(2, report.steps))
        verdict = (
            ("fails and flagged" if report.problems else "MISS")
            if failure
            else ("works and not flagged" if not report.errors else "FALSE ALARM")
        )
        if failure and failure.startswith("state changes") and report.problems:
            # a state that changes its types for real is the check's family 1
            verdict = verdict if "state drift" in report.families() else "WRONG FAMILY"
        counts[verdict] += 1
        event(f"{setup.name.split(',')[0]}: {verdict}")
        if verdict in ("MISS", "FALSE ALARM", "WRONG FAMILY"):
            disagreements.append(f"{verdict} {setup}\n  real: {failure}\n  check: {report}")

    agrees()
    agreed = counts["fails and flagged"] + counts["works and not flagged"]
    summary = (
        f"check_optimizer properties: {counts['tried']} set-ups tried, {counts['refused']} "
        f"refused with a documented error, {agreed} agree with the real run "
        f"({counts['fails and flagged']} fail and are flagged, "
        f"{counts['works and not flagged']} work and are not), "
        f"{len(disagreements)} disagree, {counts['crashes']} crashes"
    )
    print(summary)
    assert not disagreements, summary + "\n" + "\n".join(disagreements[:5])
    assert counts["fails and flagged"] and counts["works and not flagged"], summary


PARAMS = {"w": jnp.ones((2, 3)), "b": jnp.zeros(3, jnp.bfloat16)}
GOOD_DTYPES = [jnp.float32, "float32", jnp.bfloat16, "bfloat16", jnp.float16, "complex64"]
BAD_DTYPES = [jnp.float64, float, jnp.int32, "int8", jnp.bool_, "f32", int, 1, jnp.ones(2)]
BAD_PARAMS = [PARAMS, None, {}, {"name": "abc"}, {"n": jnp.arange(3)}, {"s": "x", "w": jnp.ones(2)}]


GOOD = {
    "steps": st.one_of(st.none(), st.integers(1, 3)),
    "grads_dtype": st.sampled_from([None, *GOOD_DTYPES]),
    "update_params": st.sampled_from([True, False, None, "both"]),
    "strict": st.booleans(),
    "update_kwargs": st.sampled_from([None, {}]),
}
BAD = {
    "steps": st.one_of(st.integers(-2, 0), st.integers(65, 10**7), st.floats(0, 3), st.booleans()),
    "grads_dtype": st.sampled_from(BAD_DTYPES),
    "update_params": st.sampled_from([1, "yes", "Both"]),
    "strict": st.sampled_from(["yes", None, 1]),
    "update_kwargs": st.sampled_from(["value", {1: 2}, [("value", 1)]]),
}


@st.composite
def options(draw: st.DrawFn) -> dict[str, Any]:
    """The options, none, one or two of them against the rules."""
    bad = draw(st.sets(st.sampled_from(sorted(BAD)), max_size=2))
    return {name: draw(BAD[name] if name in bad else GOOD[name]) for name in sorted(GOOD)}


def _documented(args: dict[str, Any]) -> bool:
    """Whether the arguments keep every rule of check_optimizer's docstring."""
    steps, dtype, kwargs = args["steps"], args["grads_dtype"], args["update_kwargs"]
    ok_steps = steps is None or (
        type(steps) is int and 1 <= steps <= MAX_EXPLICIT_STEPS  # noqa: E721
    )
    ok_kwargs = kwargs is None or (
        isinstance(kwargs, Mapping) and all(isinstance(k, str) for k in kwargs)
    )
    ok_update = args["update_params"] in (True, False, None, "both") and type(
        args["update_params"]
    ) in (bool, type(None), str)
    try:
        ok_dtype = dtype is None or (
            args["grads"] is None
            and not hasattr(dtype, "shape")
            and jnp.issubdtype(jnp.dtype(dtype), jnp.inexact)
            and jax.dtypes.canonicalize_dtype(dtype) == jnp.dtype(dtype)
        )
    except TypeError:
        ok_dtype = False
    leaves = jax.tree.leaves(args["params"])
    defaultable = not leaves or any(
        isinstance(x, jax.Array) and jnp.issubdtype(x.dtype, jnp.inexact) for x in leaves
    )
    ok_params = args["grads"] is not None or defaultable
    ok = ok_steps and ok_kwargs and ok_update and ok_dtype and ok_params
    return ok and isinstance(args["strict"], bool)


@_settings(SCALE // 4 or 80)
@given(params=st.sampled_from(BAD_PARAMS), grads_given=st.booleans(), kwargs=options())
def test_arguments_are_checked_with_clear_errors(params, grads_given, kwargs):
    args = dict(kwargs, params=params, grads=grads_like(params) if grads_given else None)
    try:
        report = check_optimizer(optax.adam(1e-3), **args)
    except OptimizerCheckError:
        assert args["strict"] is True and _documented(args)
        return
    except (TypeError, ValueError) as error:
        assert _own_error(error), "".join(traceback.format_exception(error))
        assert not _documented(args), f"refused documented arguments: {error}"
        return
    assert isinstance(report, CheckReport) and _documented(args), args

"""The ``callable`` family of the check: callables that optax will call although they are data.

Two places in optax call a hyperparameter when it is callable:

* ``inject_hyperparams`` calls every callable hyperparameter with the step count, as a
  schedule (optax/schedules/_inject.py, ``elif callable(value)``);
* ``multi_transform`` / ``partition`` call ``param_labels`` with the params when it is
  callable (optax/transforms/_combining.py, ``if callable(param_labels)``).

The callables are judged by behaviour, not by their type: each one under
``inject_hyperparams`` is called (abstractly, with ``jax.eval_shape``) with a step count,
as optax will call it.  A numeric scalar is a schedule, whatever the callable is (a
function, an Equinox module, a ``jax.tree_util.Partial``), and is fine.  A tree, a bool,
a string or ``None`` is not a schedule's number, and a hyperparameter that takes a tree of
params or labels (a mask, labels, dimension numbers) is never a schedule, unless it
returns the same tree of Python values for the step count as for the params (a frozen
dataclass whose ``__call__`` returns a fixed mask): optax then gets the tree it would
have got, which is only a note.  A callable pytree given as ``param_labels`` is called
with the params too, and is fine when it returns labels.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator, Mapping
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from casebook import trace
from casebook.check._calls import fixed_tree, labels_work
from casebook.check._report import Finding, first_line
from casebook.check._trees import Split

# Hyperparameters that optax reads as a tree matching the params (or a function of the
# params that returns one): masks, labels and per-parameter dimension numbers.
_TREE_HYPERPARAMETER = re.compile(r"^(mask|.*_mask|param_labels|.*_labels|.*dimension_numbers)$")


def is_tree_hyperparameter(name: str) -> bool:
    """Whether optax treats hyperparameter ``name`` as a per-parameter tree (a mask,
    labels or dimension numbers), so that it can never be a schedule of the step count.

    Args:
        name: the keyword argument's name, e.g. ``"weight_decay_mask"``.

    Returns:
        True for ``mask``, ``*_mask``, ``param_labels``, ``*_labels`` and
        ``*dimension_numbers``.
    """
    return bool(_TREE_HYPERPARAMETER.match(name))


def _closure_items(fn: Any) -> Iterator[tuple[str, Any]]:
    """(name, value) of the closure cells of a function (and of functools.partial)."""
    func = getattr(fn, "func", fn)  # functools.partial
    code, cells = getattr(func, "__code__", None), getattr(func, "__closure__", None)
    if code is None or not cells:
        return
    for name, cell in zip(code.co_freevars, cells):
        try:
            yield name, cell.cell_contents
        except ValueError:  # an empty cell
            continue


def _children(value: Any) -> list[Any]:
    if isinstance(value, (tuple, list)):
        return list(value)
    if isinstance(value, Mapping):
        return list(value.values())
    return [value]


def walk_transforms(
    opt: Any, where: str = "optimizer", seen: set[int] | None = None
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every (where, closure dict) of the init/update functions reachable from ``opt``.

    Args:
        opt: an optax ``GradientTransformation`` (or anything with ``init``/``update``).
        where: the label of ``opt`` in the results.
        seen: ids already visited (for the recursion).

    Returns:
        An iterator of (label, {closure name: value}), through closures, tuples, lists
        and dicts of functions, and nested transformations.
    """
    seen = set() if seen is None else seen
    if id(opt) in seen:
        return
    seen.add(id(opt))
    for attr in ("init", "update"):
        fn = getattr(opt, attr, None)
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        cells = dict(_closure_items(fn))
        if cells:
            yield f"{where}.{attr}", cells
        for name, value in cells.items():
            for child in _children(value):
                if hasattr(child, "init") and hasattr(child, "update"):
                    yield from walk_transforms(child, f"{where}.{attr}<{name}>", seen)
                elif callable(child) and hasattr(child, "__code__") and id(child) not in seen:
                    seen.add(id(child))
                    inner = dict(_closure_items(child))
                    if inner:
                        yield f"{where}.{attr}<{name}>", inner


def _is_callable_data(value: Any) -> bool:
    """A callable pytree with at least one leaf that is not callable (an Equinox module
    holding arrays, bools or strings): data that happens to be callable."""
    if not callable(value) or inspect.isfunction(value) or inspect.ismethod(value):
        return False
    leaves = jax.tree.leaves(value)
    return bool(leaves) and not all(callable(leaf) for leaf in leaves)


def _what_it_returns(fn: Any) -> tuple[str | None, str]:
    """Call ``fn`` with an abstract int32 step count, as ``inject_hyperparams`` does.

    Returns:
        (None, type) when the result is a numeric scalar (a schedule), else (the
        problem in words, what came back).
    """
    count = jax.ShapeDtypeStruct((), jnp.int32)
    try:
        out = jax.eval_shape(fn, count)
    except Exception as error:  # the callable fails on a step count
        return "fails when called with the step count", first_line(error, 100)
    got = trace.shorten(str(trace.types(out)), 60)
    if isinstance(out, (str, bytes)) or out is None:
        return f"returns {type(out).__name__} where a schedule's number is expected", got
    if isinstance(
        out, (jax.ShapeDtypeStruct, np.ndarray, np.generic, int, float)
    ) and not isinstance(out, bool):
        dtype = jnp.result_type(out)
        if jnp.ndim(out) == 0 and (
            jnp.issubdtype(dtype, jnp.floating) or jnp.issubdtype(dtype, jnp.integer)
        ):
            return None, got
        if jnp.ndim(out) != 0:
            return "returns an array, not a scalar, where a schedule's number is expected", got
    if isinstance(out, bool) or (hasattr(out, "dtype") and out.dtype == jnp.bool_):
        return "returns a bool where a schedule's number is expected", got
    return "returns a tree where a schedule's number is expected", got


def _schedule_finding(name: str, fn: Any, params: Split | None = None) -> Finding | None:
    """The finding for hyperparameter ``name`` of ``inject_hyperparams``, or None."""
    label = f"inject_hyperparams({name}=...)"
    fix = f'pass static_args="{name}" (optax>=0.2.4) so optax uses it as it is'
    if is_tree_hyperparameter(name):
        problem, got = _what_it_returns(fn)
        if fixed_tree(fn, params):
            return Finding(
                "callable hyperparameter",
                "note",
                label,
                f"inject_hyperparams calls this {name} with the step count, not with "
                f"params, and it returns the same tree ({got}) either way, so it works",
                fix,
            )
        outcome = (
            f"fails there: {got}"
            if problem and problem.startswith("fails")
            else f"returns {got} there"
        )
        if _is_callable_data(fn):
            what = (
                f"{type(fn).__name__} is a callable pytree with data leaves, and "
                f"inject_hyperparams will call it as a schedule with the step count; {outcome}"
            )
        else:
            what = (
                f"this {name} function will be called with the step count, not with "
                f"params, and {outcome}"
            )
        return Finding("callable hyperparameter", "error", label, what, fix)
    if inspect.isclass(fn) or name.endswith("_dtype"):
        return Finding(
            "callable hyperparameter",
            "error",
            label,
            f"{getattr(fn, '__name__', type(fn).__name__)} is a type (a dtype?), and "
            "inject_hyperparams will call it with the step count as a schedule",
            f'pass static_args="{name}", or the dtype as a string ("bfloat16")',
        )
    problem, got = _what_it_returns(fn)
    if problem is None:
        return None  # a schedule, whatever kind of callable it is
    return Finding(
        "callable hyperparameter",
        "error",
        label,
        f"inject_hyperparams calls {type(fn).__name__} with the step count as a "
        f"schedule, and it {problem}: {got}",
        fix,
    )


def _labels_finding(where: str, value: Any) -> Finding:
    return Finding(
        "callable hyperparameter",
        "error",
        f"{where}: param_labels",
        f"{type(value).__name__} is a callable pytree, and multi_transform/partition will "
        "call it with the params (or updates) instead of reading it as the labels",
        "pass a function that returns the labels: param_labels=lambda params: labels",
    )


def callable_findings(optimizer: Any, params: Split | None = None) -> list[Finding]:
    """Family 3: the callables that optax will call although they are data.

    Args:
        optimizer: the optax ``GradientTransformation`` under check.
        params: what ``init`` gets, split; a mask or labels callable is called with it to
            see whether it works where optax calls it.

    Returns:
        One error per hyperparameter of ``inject_hyperparams`` that is not a schedule
        of the step count (a note for a mask that returns the same tree for the step
        count as for the params), and per ``param_labels`` of
        ``multi_transform``/``partition`` that is a callable pytree and does not return
        labels for the params.
    """
    findings: list[Finding] = []
    reported: set[int] = set()
    for where, cells in walk_transforms(optimizer):
        schedules = cells.get("sched_hps")
        if isinstance(schedules, Mapping):
            for name, wrapped in schedules.items():
                fn = getattr(wrapped, "schedule_fn", wrapped)
                if id(fn) not in reported:
                    reported.add(id(fn))
                    finding = _schedule_finding(name, fn, params)
                    if finding is not None:
                        findings.append(finding)
        labels = cells.get("param_labels")
        if labels is not None and _is_callable_data(labels) and id(labels) not in reported:
            reported.add(id(labels))
            if not labels_work(labels, params):
                findings.append(_labels_finding(where, labels))
    return findings

"""The ``leaf`` family of the check: leaves that optax touches although it should not.

Two ways a tree that is fine for the user's model breaks optax (cases 3 and 5):

* non-array leaves (functions, strings, other objects of an Equinox model) that ``init``
  or ``update`` tries to trace or to do arithmetic on.  When a step fails and the tree has
  such leaves, the step is tried again with ``None`` in their place; if that works, they
  are what to blame (:func:`non_array_finding`);
* state that ``init`` built for leaves that get no grads (an int position, a bool buffer,
  a PRNG key, a frozen layer), on which ``update`` then fails.  ``init`` is tried again
  with only the leaves that get grads (:func:`gradless_init`).

Non-array leaves that optax never reads are only notes (:mod:`casebook.check._inputs`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax

from casebook import trace
from casebook.check._report import Finding, first_line
from casebook.check._trees import Split, describe, grads_none_mask


def non_array_finding(split: Split, label: str, phase: str, error: BaseException) -> Finding:
    """The leaves to blame: those that are not JAX values, if any (a Python number next to
    them is traced as a scalar and is not the problem), else every non-array leaf."""
    culprits = split.non_values or split.non_arrays
    leaves = "; ".join(f"params{p} = {describe(v)}" for p, v in culprits)
    return Finding(
        "non-array leaf",
        "error",
        leaves,
        f"{phase} touches them: {first_line(error)}",
        f"give optax only the arrays ({label})",
    )


def gradless_init(
    optimizer: Any,
    q: Split,
    grads: Any,
    init_params: Any,
    error: BaseException,
    update: Callable[[Any], Any],
) -> tuple[Any, Finding] | None:
    """When ``update`` failed with ``error`` because ``init`` built state for leaves that
    get no grads (``None``), the state of an ``init`` of the leaves that do get grads and
    the finding that says so; None when it was not that.

    Args:
        optimizer: the optax ``GradientTransformation``.
        q: what ``init`` got, split.
        grads: the (abstract) grads.
        init_params: what ``init`` got, whole.
        error: what the first ``update`` raised.
        update: one abstract ``update`` step of a state (raises what ``update`` raises).
    """
    none_at = grads_none_mask(grads, init_params)
    if none_at is None:
        return None
    drop = [a and n for a, n in zip(q.is_array, none_at)]
    if not any(drop):
        return None
    trimmed = [None if d else a for a, d in zip(q.arrays, drop)]
    try:
        state = jax.eval_shape(lambda arrays: optimizer.init(q.combine(arrays, True)), trimmed)
        update(state)
    except Exception:
        return None
    leaves = "; ".join(
        f"params{path} = {trace.type_str(a)}" for path, a, d in zip(q.paths, q.arrays, drop) if d
    )
    return state, Finding(
        "non-array leaf",
        "error",
        leaves,
        f"init built optimizer state for leaves that get no grads (None), and update fails on "
        f"it: {first_line(error)}",
        "init only what gets grads, e.g. init(eqx.filter(model, eqx.is_inexact_array))",
    )

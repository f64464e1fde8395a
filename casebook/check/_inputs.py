"""The arguments of :func:`casebook.check.check_optimizer`: checked, completed, noted.

An argument of the wrong kind (an optimizer class, a float number of steps, grads that do
not fit the params) would otherwise fail deep inside ``jax.eval_shape`` with a message
about the check's own code; here it fails first, with a message about the argument.  What
the check has to assume about its inputs (the default grads, non-array leaves in the
params) becomes a note of the report.  Kept apart from the bug families: these are the
user's arguments to the check, not bugs of the optimizer set-up.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from casebook import trace
from casebook.check._report import Finding
from casebook.check._trees import (
    Split,
    default_grads,
    describe,
    fast_part,
    grads_mismatch,
    is_inexact,
)

__all__ = ["checked_grads", "checked_init_params", "input_notes", "validate"]

_LOW_PRECISION = (jnp.dtype(jnp.bfloat16), jnp.dtype(jnp.float16))


def validate(optimizer: Any, steps: Any, update_kwargs: Any, update_params: Any) -> None:
    """Clear errors for the inputs that would otherwise fail deep inside the check."""
    if inspect.isclass(optimizer):
        example = (
            "optax.MultiSteps(optax.adam(1e-3), every_k_schedule=4)"
            if optimizer.__name__ == "MultiSteps"
            else f"{optimizer.__name__}(...)"
        )
        raise TypeError(
            f"check_optimizer needs an optax GradientTransformation, got the class "
            f"{optimizer.__name__} itself: create one first, e.g. {example}"
        )
    if not (
        callable(getattr(optimizer, "init", None)) and callable(getattr(optimizer, "update", None))
    ):
        raise TypeError(
            f"check_optimizer needs an optax GradientTransformation (with init and "
            f"update), got {type(optimizer).__name__}: {trace.shorten(repr(optimizer), 60)}"
        )
    if steps is not None and (isinstance(steps, bool) or not isinstance(steps, (int, np.integer))):
        raise TypeError(
            f"steps must be an int (or None: step until the state's types settle), "
            f"got {type(steps).__name__} {steps!r}"
        )
    if steps is not None and steps < 1:
        raise ValueError(f"steps must be at least 1, got {steps}")
    if update_kwargs is not None and not isinstance(update_kwargs, Mapping):
        raise TypeError(
            "update_kwargs must be a mapping of keyword arguments for update, e.g. "
            f"dict(value=loss), got {type(update_kwargs).__name__} {update_kwargs!r}"
        )
    if update_params not in (True, False, "both"):
        raise ValueError(f'update_params must be True, False or "both", got {update_params!r}')


def checked_grads(params: Any, grads: Any, grads_dtype: Any) -> Any:
    """The abstract grads to step with: ``grads`` made abstract (once they are found to
    fit ``params``), or :func:`default_grads` when ``grads`` is None."""
    target = fast_part(params)
    if grads is None:
        grads_abs = default_grads(params, grads_dtype)
        if not jax.tree.leaves(grads_abs):
            raise ValueError(
                "check_optimizer: params have no floating-point array leaf, so there "
                "are no grads to default to; pass grads= as your code computes them"
            )
    else:
        mismatch = grads_mismatch(grads, params)
        if mismatch is not None and target is not None:
            mismatch = grads_mismatch(grads, target)
        if mismatch is not None:
            raise ValueError(
                "check_optimizer: grads do not match params (None may stand for "
                f"any subtree): {mismatch}"
            )
        g = Split.of(grads)
        grads_abs = g.combine(g.arrays, keep_others=True)
    return grads_abs


def checked_init_params(p: Split, params: Any, init_params: Any) -> Split:
    """What ``init`` gets, split: ``p`` (the params, split) when ``init_params`` is None,
    else ``init_params`` once they are found to fit ``params``."""
    if init_params is None:
        q = p
    else:
        q = Split.of(init_params)
        if grads_mismatch(init_params, params) is not None and q.treedef != p.treedef:
            raise ValueError(
                "check_optimizer: init_params do not match params (None may stand "
                f"for any subtree): {trace.treedef_diff(params, init_params)}"
            )
    return q


def input_notes(p: Split, params: Any, grads_given: bool, grads_dtype: Any) -> list[Finding]:
    """Notes on what the check assumed: non-array leaves, and low-precision default grads."""
    notes = [
        Finding("non-array leaf", "note", f"params{path}", f"{describe(leaf)} (not an array)")
        for path, leaf in p.non_values
    ]
    numbers = len(p.non_arrays) - len(p.non_values)
    if numbers:
        notes.append(
            Finding(
                "non-array leaf",
                "note",
                "params",
                f"{numbers} Python number leaf(s) (bool, int or float, not arrays; "
                "eqx.filter_jit keeps them static, jax.jit would trace them as "
                "weakly typed scalars)",
            )
        )
    low = sorted(
        {
            str(x.dtype)
            for x in jax.tree.leaves(params)
            if is_inexact(x) and jnp.dtype(x.dtype) in _LOW_PRECISION
        }
    )
    if low and not grads_given and grads_dtype is None:
        notes.append(
            Finding(
                "state drift",
                "note",
                "grads",
                f"checked with {'/'.join(low)} grads, like the params; if your grads "
                "are float32 (mixed precision), pass grads or grads_dtype=jnp.float32",
            )
        )
    return notes

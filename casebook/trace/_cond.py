"""The output types of each branch of every ``lax.cond`` call in a block:
:func:`record_cond_branches`, giving :class:`CondCalls`.

Each call's branches are shape-evaluated and compared with
:func:`casebook.trace.type_diff` before the real ``cond`` runs, so the record survives
the real ``cond`` refusing them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import jax

from casebook.trace._common import _Listing
from casebook.trace._drift import DriftReport, type_diff
from casebook.trace._types import types


@dataclass(frozen=True)
class CondCall:
    """One recorded ``lax.cond`` call: each branch's name and output types.

    ``true_out`` / ``false_out`` are trees of :func:`type_str` strings, or the text of
    the exception that tracing that branch raised.  ``diff`` compares the true branch
    (before) with the false branch (after); it is None when a branch failed to trace.
    """

    true_name: str
    false_name: str
    true_out: Any
    false_out: Any
    diff: DriftReport | None

    def __str__(self) -> str:
        lines = [
            f"cond({self.true_name}, {self.false_name})",
            f"  true  -> {self.true_out}",
            f"  false -> {self.false_out}",
        ]
        if self.diff is None:
            lines.append("  (a branch failed to trace)")
        else:
            lines += [f"  {line}" for line in str(self.diff).splitlines()]
        return "\n".join(lines)


class CondCalls(_Listing[CondCall]):
    """The calls recorded by :func:`record_cond_branches`, in call order."""

    empty_text = "no lax.cond calls recorded"


def _branch_types(fn: Callable[..., Any], operands: tuple[Any, ...]) -> tuple[Any, Any | None]:
    """(types or error text, shapes or None) of ``fn(*operands)``, via eval_shape."""
    try:
        shapes = jax.eval_shape(fn, *operands)
    except Exception as error:  # a broken branch is exactly what we want to record
        return f"{type(error).__name__}: {error}", None
    return types(shapes), shapes


def _record_call(
    true_fun: Callable[..., Any], false_fun: Callable[..., Any], operands: tuple[Any, ...]
) -> CondCall:
    """Shape-evaluate both branches of one ``cond`` call and compare their outputs."""
    true_out, true_shapes = _branch_types(true_fun, operands)
    false_out, false_shapes = _branch_types(false_fun, operands)
    traced = true_shapes is not None and false_shapes is not None
    return CondCall(
        true_name=getattr(true_fun, "__name__", repr(true_fun)),
        false_name=getattr(false_fun, "__name__", repr(false_fun)),
        true_out=true_out,
        false_out=false_out,
        diff=type_diff(true_shapes, false_shapes) if traced else None,
    )


@contextlib.contextmanager
def record_cond_branches() -> Iterator[CondCalls]:
    """Record the branch output types of every ``jax.lax.cond`` call in the block.

    Temporarily replaces the ``cond`` attribute of the ``jax.lax`` module, so code
    that looks it up at call time (``lax.cond(...)``, ``jax.lax.cond(...)``) is seen;
    code that did ``from jax.lax import cond`` before the block is not.  Each call is
    recorded (branch outputs via ``jax.eval_shape``) *before* it is handed to the real
    ``cond``, so the record survives the real ``cond`` raising::

        with record_cond_branches() as calls:
            try:
                step(state)
            except TypeError:
                pass
        print(calls)   # which leaf, 'bool[]' vs 'i32[]'

    ``cond`` calls made while a branch is being shape-evaluated for the record are
    not recorded twice.  The original ``cond`` is restored on exit, even on error.

    Yields:
        The :class:`CondCalls`, filled as the block runs.

    Examples:
        >>> import jax, jax.numpy as jnp
        >>> with record_cond_branches() as calls:
        ...     failure = None
        ...     try:
        ...         jax.lax.cond(True, lambda x: x > 0, lambda x: x, jnp.float32(1.0))
        ...     except TypeError:
        ...         failure = "the real cond refused the branches"
        >>> failure
        'the real cond refused the branches'
        >>> print(calls)
        cond(<lambda>, <lambda>)
          true  -> bool[]
          false -> f32[]
          <root>: dtype bool[] -> f32[]
    """
    real_cond = jax.lax.cond
    calls = CondCalls()
    recording = False

    def spy(
        pred: Any,
        true_fun: Callable[..., Any],
        false_fun: Callable[..., Any],
        *operands: Any,
        **kwargs: Any,
    ) -> Any:
        nonlocal recording
        if not recording:
            recording = True
            try:
                calls.append(_record_call(true_fun, false_fun, operands))
            finally:
                recording = False
        return real_cond(pred, true_fun, false_fun, *operands, **kwargs)

    jax.lax.cond = spy
    try:
        yield calls
    finally:
        jax.lax.cond = real_cond

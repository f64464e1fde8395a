"""Leaf-by-leaf type drift between two pytrees, and of a step's state across steps:
:class:`Drift`, :class:`DriftReport`, :func:`type_diff`, :func:`state_drift`.

A drift is a change of dtype, weak type or shape of one leaf, or a change of tree
structure (located with the walk of :mod:`casebook.trace._structure`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import jax
from jax.tree_util import keystr

from casebook.display import Cell, Table
from casebook.trace._common import _Listing, _path_text
from casebook.trace._structure import _first_split, _structure_text
from casebook.trace._types import jax_type, type_str


@dataclass(frozen=True)
class Drift:
    """One changed property of one leaf between two pytrees.

    ``kind`` is ``'dtype'``, ``'weak_type'``, ``'shape'`` or ``'structure'``.  For leaf
    kinds, ``before``/``after`` are the leaf's full :func:`type_str` on each side, so the
    line reads as the types a jaxpr would show.  For ``'structure'`` they are the
    (shortened) tree structures of the subtrees at ``path``, the first place where the
    two trees part ways.  ``path`` is ``jax.tree_util.keystr`` of the leaf's key path
    ('' for the root).  ``step`` is set by :func:`state_drift` (1 for the state after the
    first step) and is None otherwise.

    Examples:
        >>> print(Drift("['found_nan']", "dtype", "bool[]", "i32[]", step=1))
        step 1: ['found_nan']: dtype bool[] -> i32[]
    """

    path: str
    kind: str
    before: str
    after: str
    step: int | None = None

    def __str__(self) -> str:
        where = "" if self.step is None else f"step {self.step}: "
        return f"{where}{_path_text(self.path)}: {self.kind} {self.before} -> {self.after}"


class DriftReport(_Listing[Drift]):
    """The drifts found by :func:`type_diff` / :func:`state_drift`, in tree order.

    A list (true when there is drift); prints one line per drift, or ``no drift``, and
    renders as a small table in Jupyter.
    """

    empty_text = "no drift"

    def _repr_html_(self) -> str:
        if not self:
            return f"<p>{self.empty_text}</p>"
        with_step = any(d.step is not None for d in self)
        header = (["step"] if with_step else []) + ["path", "kind", "before", "after"]
        rows = tuple(
            tuple(
                Cell(c, code=True)
                for c in ([str(d.step)] if with_step else [])
                + [_path_text(d.path), d.kind, d.before, d.after]
            )
            for d in self
        )
        return Table(tuple(header), rows)._repr_html_()


_LEAF_KINDS = ("dtype", "weak_type", "shape")


def _leaf_properties(x: Any) -> tuple[Any, bool, Any]:
    """(dtype, weak_type, shape) of a leaf, in the order of ``_LEAF_KINDS``.  A
    non-JAX object's Python type stands in for its dtype, so replacing e.g. a string
    by a function still shows as drift."""
    aval = jax_type(x)
    if aval is None:
        return type(x), False, None
    return aval.dtype, bool(getattr(aval, "weak_type", False)), getattr(aval, "shape", None)


def type_diff(before: Any, after: Any) -> DriftReport:
    """Leaf-by-leaf type drift from pytree ``before`` to pytree ``after``.

    Leaves may be arrays, ``ShapeDtypeStruct``s (e.g. from ``jax.eval_shape``) or
    Python scalars.  If the tree structures differ, the report holds a single
    ``'structure'`` drift at the first differing path (see :func:`treedef_diff`) and
    leaves are not compared.  Otherwise it holds one drift per changed property
    (``dtype``, ``weak_type``, ``shape``, in that order) per leaf.

    Args:
        before: a pytree, such as an optimizer state.
        after: the pytree to compare it with, such as the state after one step.

    Returns:
        A :class:`DriftReport`, empty (false) when nothing changed.

    Examples:
        >>> import jax.numpy as jnp
        >>> print(type_diff({"n": jnp.zeros((), bool)}, {"n": jnp.zeros((), jnp.int32)}))
        ['n']: dtype bool[] -> i32[]
        >>> print(type_diff({"a": 1.0}, {"a": 1.0, "b": 2.0}))
        <root>: structure {'a': *} -> {'a': *, 'b': *}
        >>> print(type_diff({"a": jnp.ones(2)}, {"a": jnp.zeros(2)}))
        no drift
    """
    split = _first_split(before, after)
    if split is not None:
        path, sub_before, sub_after, _ = split
        return DriftReport(
            [Drift(path, "structure", _structure_text(sub_before), _structure_text(sub_after))]
        )
    report = DriftReport()
    pairs = zip(jax.tree_util.tree_leaves_with_path(before), jax.tree.leaves(after))
    for (key_path, old), new in pairs:
        old_props, new_props = _leaf_properties(old), _leaf_properties(new)
        for kind, old_value, new_value in zip(_LEAF_KINDS, old_props, new_props):
            if old_value != new_value:
                report.append(Drift(keystr(key_path), kind, type_str(old), type_str(new)))
    return report


def state_drift(
    step: Callable[..., Any],
    state: Any,
    *args: Any,
    steps: int = 2,
    select: Callable[[Any], Any] | None = None,
) -> DriftReport:
    """Type drift of a step function's state, over ``steps`` abstract steps.

    Runs ``jax.eval_shape(step, state, *args)`` (shapes only: no FLOPs, no compile),
    takes ``select(output)`` as the new state (``select`` defaults to the identity)
    and feeds it back, ``steps`` times.  Each step's state is compared with the
    *initial* state; its drifts carry ``step=k`` (k = 1 for the state after the first
    step).  Stops early after a structure drift, since the state can no longer be fed
    back as the same tree.  For an optax optimizer::

        state_drift(lambda s, g, p: opt.update(g, s, p), opt_state, grads, params,
                    select=lambda out: out[1])

    Args:
        step: the step function, ``step(state, *args)``.
        state: the initial state (arrays or ``ShapeDtypeStruct`` s).
        *args: the step's other arguments, the same at every step.
        steps: how many steps to trace.
        select: picks the new state out of the step's output.

    Returns:
        A :class:`DriftReport` of every step's drift from the initial state.

    Examples:
        >>> import jax.numpy as jnp
        >>> print(state_drift(lambda s: (s * 2).astype(jnp.float32), jnp.zeros(3, jnp.bfloat16)))
        step 1: <root>: dtype bf16[3] -> f32[3]
        step 2: <root>: dtype bf16[3] -> f32[3]
    """
    select = select or (lambda out: out)
    report = DriftReport()
    current = state
    for k in range(1, steps + 1):
        current = select(jax.eval_shape(step, current, *args))
        found = [replace(d, step=k) for d in type_diff(state, current)]
        report.extend(found)
        if any(d.kind == "structure" for d in found):
            break
    return report

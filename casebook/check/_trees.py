"""Pytree helpers of :mod:`casebook.check`: array leaves made abstract, the rest kept.

The check traces ``init`` and ``update`` with ``jax.eval_shape``, which takes arrays only,
while the params it is given may be a whole model (functions, strings, Python numbers
next to the arrays).  :class:`Split` takes such a tree apart and puts it back together;
the other helpers say whether grads fit the params and which grads the check assumes
when none are given (:func:`default_grads`, public through :mod:`casebook.check`).  Kept
apart so that the input checks, the stepping and the families share one reading of a
tree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.tree_util import keystr

from casebook import trace
from casebook.check._report import first_line

_ARRAYS = (jax.Array, jax.ShapeDtypeStruct, np.ndarray, np.generic)
_PYTHON_NUMBERS = (bool, int, float, complex)


def _abstract(x: Any, dtype: Any = None) -> jax.ShapeDtypeStruct:
    """A ``ShapeDtypeStruct`` for an array leaf (keeping its weak type unless ``dtype``)."""
    if not isinstance(x, (jax.ShapeDtypeStruct, jax.Array)):
        x = jnp.asarray(x)
    if dtype is not None:
        return jax.ShapeDtypeStruct(x.shape, dtype)
    return jax.ShapeDtypeStruct(x.shape, x.dtype, weak_type=bool(getattr(x, "weak_type", False)))


def traceable(x: Any) -> bool:
    """Whether ``x`` is an array leaf that JAX can trace: an array of a numeric, bool or
    PRNG-key dtype (a NumPy array of strings or objects is not one)."""
    if not isinstance(x, _ARRAYS):
        return False
    dtype = x.dtype
    return bool(
        dtype == np.bool_
        or jnp.issubdtype(dtype, jnp.number)
        or jax.dtypes.issubdtype(dtype, jax.dtypes.extended)
    )


def is_inexact(x: Any) -> bool:
    """Whether ``x`` is an array leaf of a floating-point or complex dtype."""
    return traceable(x) and jnp.issubdtype(x.dtype, jnp.inexact)


@dataclass
class Split:
    """A pytree split into its array leaves (abstract) and everything else (kept)."""

    treedef: Any
    is_array: list[bool]
    arrays: list[Any]  # abstract arrays, None in place of the other leaves
    others: list[Any]  # the other leaves, None in place of arrays
    paths: list[str]

    @classmethod
    def of(cls, tree: Any) -> Split:
        with_path, treedef = jax.tree_util.tree_flatten_with_path(tree)
        paths = [keystr(p) for p, _ in with_path]
        leaves = [leaf for _, leaf in with_path]
        is_array = [traceable(leaf) for leaf in leaves]
        return cls(
            treedef,
            is_array,
            [_abstract(x) if a else None for x, a in zip(leaves, is_array)],
            [None if a else x for x, a in zip(leaves, is_array)],
            paths,
        )

    def combine(self, arrays: list[Any], keep_others: bool = True) -> Any:
        """The tree again, with ``arrays`` (e.g. tracers) and the other leaves, or
        ``None`` in their place (``keep_others=False``, like ``eqx.filter``)."""
        leaves = [
            a if is_arr else (o if keep_others else None)
            for a, o, is_arr in zip(arrays, self.others, self.is_array)
        ]
        return jax.tree_util.tree_unflatten(self.treedef, leaves)

    @property
    def non_arrays(self) -> list[tuple[str, Any]]:
        return [(p, o) for p, o, a in zip(self.paths, self.others, self.is_array) if not a]

    @property
    def non_values(self) -> list[tuple[str, Any]]:
        """The non-array leaves that are not Python numbers either (functions, strings,
        objects): the ones that no JAX transformation can take as a value."""
        return [(p, o) for p, o in self.non_arrays if not isinstance(o, _PYTHON_NUMBERS)]


def leaves_found(tree: Any, name: str = "params", limit: int = 6) -> str:
    """The leaves of ``tree`` in a few words each (``params['w'] = i32[3]``), at most
    ``limit`` of them and how many more: what an error about the tree shows."""
    with_path = jax.tree_util.tree_flatten_with_path(tree)[0]
    words = [
        f"{name}{keystr(path)} = "
        + (trace.type_str(_abstract(leaf)) if traceable(leaf) else describe(leaf))
        for path, leaf in with_path[:limit]
    ]
    more = len(with_path) - limit
    return ", ".join(words) + (f" and {more} more" if more > 0 else "")


def describe(leaf: Any) -> str:
    """A non-array leaf in a few words: its type and its name (or a short repr)."""
    name = getattr(leaf, "__qualname__", None) or getattr(leaf, "__name__", None)
    return (
        f"{type(leaf).__name__} {name}"
        if name
        else f"{type(leaf).__name__} {trace.shorten(repr(leaf), 40)}"
    )


def fast_part(params: Any) -> Any | None:
    """The ``fast`` params of an ``optax.LookaheadParams`` (what grads are taken of)."""
    if type(params).__name__ == "LookaheadParams" and hasattr(params, "fast"):
        return params.fast
    return None


def grads_mismatch(grads: Any, params: Any) -> str | None:
    """None if ``grads`` fits ``params``, else where it does not.

    Grads fit when their structure, with ``None`` allowed in place of any subtree (what
    ``eqx.filter_grad`` gives for leaves it does not differentiate), is a prefix of the
    params' structure and every array in the grads sits on a leaf of the params.
    """

    def leaf(path: Any, g: Any, p: Any) -> None:
        if g is not None and isinstance(g, _ARRAYS) and jax.tree.structure(p).num_nodes != 1:  # type: ignore[attr-defined]
            raise ValueError(f"grads{keystr(path)} is an array where params have a subtree")

    try:
        jax.tree_util.tree_map_with_path(leaf, grads, params, is_leaf=lambda x: x is None)
    except (ValueError, TypeError) as error:
        return (
            str(error).splitlines()[0]
            if "grads" in str(error)
            else (trace.treedef_diff(params, grads) or first_line(error))
        )
    return None


def default_grads(params: Any, dtype: Any = None) -> Any:
    """The grads the check assumes when none are given.

    Args:
        params: the params (an ``optax.LookaheadParams`` gives the grads of its ``fast``).
        dtype: the dtype of the grads; each leaf's own dtype when None.

    Returns:
        ``ShapeDtypeStruct`` zeros like the floating-point array leaves, and ``None`` at
        every other leaf: what ``eqx.filter_grad`` gives for int, bool and key leaves.

    Examples:
        >>> import jax.numpy as jnp
        >>> default_grads({"w": jnp.ones(2), "step": jnp.zeros((), jnp.int32)})
        {'step': None, 'w': ShapeDtypeStruct(shape=(2,), dtype=float32)}
    """
    fast = fast_part(params)
    return jax.tree.map(
        lambda x: _abstract(x, dtype) if is_inexact(x) else None, params if fast is None else fast
    )


def grads_none_mask(grads: Any, init_params: Any) -> list[bool] | None:
    """For each leaf of ``init_params``: whether the grads have ``None`` there (None
    when the grads do not line up with ``init_params``)."""
    try:
        marks = jax.tree.map(
            lambda g, sub: jax.tree.map(lambda _: g is None, sub),
            grads,
            init_params,
            is_leaf=lambda x: x is None,
        )
    except (ValueError, TypeError):
        return None
    flags = jax.tree.leaves(marks)
    return flags if len(flags) == len(jax.tree.leaves(init_params)) else None

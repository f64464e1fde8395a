"""Tree structure: what in a pytree is not an array (:func:`non_array_leaves`), and
where two tree structures first part ways (:func:`treedef_diff`).

The depth-first walk (:func:`_first_split`) is also what :func:`casebook.trace.type_diff`
uses to report a ``'structure'`` drift.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax
import numpy as np
from jax.tree_util import KeyPath, keystr

from casebook.trace._common import _Listing, _path_text, shorten


@dataclass(frozen=True)
class Leaf:
    """A pytree leaf that is not an array: where it is, its type and a short repr."""

    path: str
    type: str
    value_repr: str

    def __str__(self) -> str:
        return f"{_path_text(self.path)}: {self.type} = {self.value_repr}"


class LeafList(_Listing[Leaf]):
    """The result of :func:`non_array_leaves`; prints one line per leaf."""

    empty_text = "no non-array leaves"


_ARRAY_TYPES = (jax.Array, jax.ShapeDtypeStruct, np.ndarray, np.generic)


def non_array_leaves(tree: Any) -> LeafList:
    """The leaves of ``tree`` that are not arrays, in tree order.

    These are what ``jit`` would reject or silently treat differently: functions,
    strings, and Python scalars (which become weakly typed, reported with their
    Python type name: ``'int'``, ``'float'``, ``'bool'``).  JAX arrays, NumPy arrays
    and NumPy scalars, and ``ShapeDtypeStruct``s count as arrays.  ``None`` is an
    empty subtree in JAX, not a leaf, so it never appears.

    Args:
        tree: any pytree, such as a model or an optimizer's params.

    Returns:
        A :class:`LeafList` of :class:`Leaf` (path, type, short repr).

    Examples:
        >>> import jax.numpy as jnp
        >>> print(non_array_leaves({"w": jnp.ones(2), "name": "mlp", "lr": 0.1, "b": None}))
        ['lr']: float = 0.1
        ['name']: str = 'mlp'
    """
    return LeafList(
        Leaf(keystr(path), type(leaf).__name__, shorten(repr(leaf), 60))
        for path, leaf in jax.tree_util.tree_leaves_with_path(tree)
        if not isinstance(leaf, _ARRAY_TYPES)
    )


def _one_level(tree: Any) -> tuple[type | None, Any, list[tuple[Any, Any]]]:
    """(node type, node aux data, [(key, child)]) of the root of ``tree``.

    The node type is None when ``tree`` is a leaf.  Children are not flattened
    further (a ``None`` child is kept as a child).
    """
    pairs, treedef = jax.tree_util.tree_flatten_with_path(tree, is_leaf=lambda n: n is not tree)
    node = treedef.node_data()  # type: ignore[attr-defined]  # jaxlib has no stub for it
    if node is None:
        return None, None, []
    return node[0], node[1], [(path[0], child) for path, child in pairs]


def _node_name(node_type: type | None) -> str:
    if node_type is None:
        return "leaf"
    return "None" if node_type is type(None) else node_type.__name__


def _first_split(a: Any, b: Any, path: KeyPath = ()) -> tuple[str, Any, Any, str] | None:
    """Where the structures of ``a`` and ``b`` first differ, depth first.

    Returns (path, subtree of a, subtree of b, explanation), or None if the
    structures are equal.
    """
    if jax.tree.structure(a) == jax.tree.structure(b):  # type: ignore[operator]
        return None
    here = keystr(path)
    type_a, aux_a, kids_a = _one_level(a)
    type_b, aux_b, kids_b = _one_level(b)
    if type_a is not type_b:
        return here, a, b, f"{_node_name(type_a)} vs {_node_name(type_b)}"
    keys_a = [keystr((k,)) for k, _ in kids_a]
    keys_b = [keystr((k,)) for k, _ in kids_b]
    name = _node_name(type_a)
    if keys_a != keys_b:
        if len(keys_a) != len(keys_b):
            parts = [f"{name} has {len(keys_a)} vs {len(keys_b)} children"]
        else:
            parts = [f"{name} children differ"]
        only_a = [k for k in keys_a if k not in keys_b]
        only_b = [k for k in keys_b if k not in keys_a]
        if only_a:
            parts.append(f"only in a: {', '.join(only_a)}")
        if only_b:
            parts.append(f"only in b: {', '.join(only_b)}")
        if not (only_a or only_b):
            parts.append(f"order {', '.join(keys_a)} vs {', '.join(keys_b)}")
        return here, a, b, "; ".join(parts)
    for (key, child_a), (_, child_b) in zip(kids_a, kids_b):
        split = _first_split(child_a, child_b, (*path, key))
        if split is not None:
            return split
    data_a, data_b = shorten(repr(aux_a), 40), shorten(repr(aux_b), 40)
    return here, a, b, f"{name} node data differs: {data_a} vs {data_b}"


def _structure_text(tree: Any) -> str:
    """Shortened ``PyTreeDef(...)`` of ``tree``, without the ``PyTreeDef`` wrapper."""
    text = str(jax.tree.structure(tree))
    return shorten(text.removeprefix("PyTreeDef(").removesuffix(")"))


def treedef_diff(a: Any, b: Any) -> str | None:
    """None if pytrees ``a`` and ``b`` have the same structure, else where and how
    they first differ, e.g. ``"<root>: dict children differ; only in a: ['b']"``.

    The walk is depth first in tree order; it reports the first node whose type,
    children (keys, or count) or auxiliary data differ.

    Examples:
        >>> treedef_diff({"a": 1, "b": 2}, {"a": 1})
        "<root>: dict has 2 vs 1 children; only in a: ['b']"
        >>> treedef_diff([1.0], [2.0]) is None
        True
    """
    split = _first_split(a, b)
    if split is None:
        return None
    path, _, _, explanation = split
    return f"{_path_text(path)}: {explanation}"

"""See the mechanism of a JAX bug: abstract types, their drift, and cut-down jaxprs.

Most of the bugs in the casebook are visible before anything runs: a leaf of a
training state changes dtype or loses its weak type from one step to the next, the
two branches of a ``lax.cond`` disagree on a type, or a fix adds a
``convert_element_type`` to the program.  The helpers here make those facts
printable in a notebook cell (and assertable in the cell after it):

* :func:`type_str` / :func:`types` -- compact abstract types such as ``'i32[] weak'``;
* :func:`type_diff` / :func:`state_drift` -- leaf-by-leaf drift between two pytrees,
  or of a step function's state across steps (via ``jax.eval_shape``: no FLOPs, no
  compile);
* :func:`non_array_leaves` / :func:`treedef_diff` -- what is in a pytree that should
  not be, and where two tree structures part ways;
* :func:`jaxpr_text` / :func:`cut` / :func:`show_jaxpr` / :func:`count_primitives` --
  the program, cut down to the lines that matter;
* :func:`record_cond_branches` -- the output types of each ``lax.cond`` branch,
  recorded even when the real ``cond`` then refuses them.
"""

from __future__ import annotations

import contextlib
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import jax
import numpy as np
from jax.extend.core import ClosedJaxpr, Jaxpr

try:
    from jax.extend.core import jaxprs_in_params
except ImportError:  # jax before 0.6 (the era stacks) has it only in jax.core
    from jax.core import jaxprs_in_params  # type: ignore[attr-defined,no-redef]
from jax.tree_util import KeyPath, keystr

from casebook.display import Cell, PlainText, Table

__all__ = [
    "CondCall",
    "CondCalls",
    "Drift",
    "DriftReport",
    "Excerpt",
    "Leaf",
    "LeafList",
    "count_primitives",
    "cut",
    "jax_type",
    "jaxpr_text",
    "non_array_leaves",
    "record_cond_branches",
    "shorten",
    "show_jaxpr",
    "state_drift",
    "treedef_diff",
    "type_diff",
    "type_str",
    "types",
]

_T = TypeVar("_T")
_PYTHON_SCALARS = (bool, int, float, complex)
_ELISION = "    ..."


class _Listing(PlainText, list[_T]):
    """A list result that prints one line per item (``empty_text`` when empty),
    also as the plain-text display in IPython/Jupyter."""

    empty_text = "(none)"

    def __str__(self) -> str:
        return "\n".join(map(str, self)) if self else self.empty_text


def shorten(text: str, width: int = 72) -> str:
    """Cut ``text`` to ``width`` characters, marking the cut with '...'.

    Examples:
        >>> shorten("PyTreeDef({'a': *, 'b': *})", 16)
        "PyTreeDef({'a..."
    """
    return text if len(text) <= width else text[: width - 3] + "..."


def _path_text(path: str) -> str:
    """Display form of a key path: the root (empty path) is shown as '<root>'."""
    return path or "<root>"


# --------------------------------------------------------------------------- types

_typeof = getattr(jax, "typeof", None) or jax.core.get_aval  # type: ignore[attr-defined]  # jax < 0.6


def jax_type(x: Any) -> Any | None:
    """The abstract value JAX would give ``x``, or None if ``x`` is not a JAX type.

    Args:
        x: any object: an array, a ``ShapeDtypeStruct``, a Python number, a function...

    Returns:
        ``jax.typeof(x)``, or None where JAX refuses ``x`` (a function, a string).

    Examples:
        >>> import jax.numpy as jnp
        >>> jax_type(jnp.ones(3, jnp.int32))
        ShapedArray(int32[3])
        >>> jax_type(print) is None
        True
    """
    try:
        return _typeof(x)
    except TypeError:
        return None


def type_str(x: Any) -> str:
    """Compact abstract type of one value, as it appears in a jaxpr.

    Arrays, ``ShapeDtypeStruct``s, tracers and NumPy values give e.g. ``'f32[3]'``,
    ``'bool[]'``, ``'key<fry>[]'``, with ``' weak'`` appended for weakly typed values
    (``'i32[] weak'``).  Python scalars, which JAX treats as weakly typed, are shown as
    what they are, ``'float (python)'``; so is any other non-JAX object
    (``'function (python)'``).

    Args:
        x: one value (a leaf of a pytree).

    Returns:
        Its type as text.

    Examples:
        >>> import jax.numpy as jnp
        >>> type_str(jnp.ones((2, 3), jnp.bfloat16)), type_str(jnp.asarray(1)), type_str(0.5)
        ('bf16[2,3]', 'i32[] weak', 'float (python)')
    """
    aval = None if isinstance(x, _PYTHON_SCALARS) else jax_type(x)
    if aval is None:
        return f"{type(x).__name__} (python)"
    text = aval.str_short(short_dtypes=True)
    return f"{text} weak" if getattr(aval, "weak_type", False) else text


def types(tree: Any) -> Any:
    """The pytree ``tree`` with every leaf replaced by its :func:`type_str`.

    Examples:
        >>> import jax.numpy as jnp
        >>> types({"w": jnp.ones(2), "count": 3})
        {'count': 'int (python)', 'w': 'f32[2]'}
    """
    return jax.tree.map(type_str, tree)


# --------------------------------------------------------------------------- drift


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


# --------------------------------------------------------------------------- structure


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


# --------------------------------------------------------------------------- jaxprs


class Excerpt(PlainText, str):
    """A cut-down jaxpr: a ``str`` (so ``'mul' in excerpt`` works) that IPython
    prints raw, without quotes.  ``marked`` holds the original lines that got a
    mark, so a notebook can assert on them."""

    marked: list[str]

    def __new__(cls, text: str, marked: Sequence[str] = ()) -> Excerpt:
        excerpt = super().__new__(cls, text)
        excerpt.marked = list(marked)
        return excerpt


def jaxpr_text(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> str:
    """The jaxpr of ``fn(*args, **kwargs)`` as plain text (no terminal colour codes,
    which ``str()`` adds inside a Jupyter kernel and which would garble HTML pages).

    Examples:
        >>> print(jaxpr_text(lambda x: x * 2, 1.0))
        { lambda ; a:f32[]. let b:f32[] = mul a 2.0... in (b,) }
    """
    return jax.make_jaxpr(fn)(*args, **kwargs).pretty_print(use_color=False)


def cut(
    text: str,
    keep: str | Sequence[str] | None,
    *,
    context: int = 0,
    mark: Mapping[str, str] | None = None,
) -> Excerpt:
    """Keep the lines of ``text`` that matter.

    A line is kept if it matches (``re.search``) any regex in ``keep`` (a string or
    a sequence of strings; None keeps every line) or any regex key of ``mark``, and
    so are ``context`` lines either side of it.  The first line (a jaxpr's signature)
    and the last (its ``in (...) }``) are always kept.  Each run of dropped lines
    becomes one ``'    ...'`` line.  A kept line matching a key of ``mark`` gets
    ``'   # <-- {note}'`` appended (the first matching key wins).

    Args:
        text: the text to cut, usually from :func:`jaxpr_text`.
        keep: the regexes of the lines to keep (None: every line).
        context: how many lines to keep on either side of a kept line.
        mark: ``{regex: note}``: the lines to keep and point at.

    Returns:
        An :class:`Excerpt`: the cut text, with the marked lines in ``.marked``.

    Examples:
        >>> text = "\\n".join([
        ...     "{ lambda ; a:f32[]. let",
        ...     "    b:f32[] = sin a",
        ...     "    c:i32[] = convert_element_type[new_dtype=int32] b",
        ...     "  in (c,) }",
        ... ])
        >>> print(cut(text, None, mark={"convert": "the cast"}))
        { lambda ; a:f32[]. let
            b:f32[] = sin a
            c:i32[] = convert_element_type[new_dtype=int32] b   # <-- the cast
          in (c,) }
        >>> print(cut(text, "convert"))
        { lambda ; a:f32[]. let
            ...
            c:i32[] = convert_element_type[new_dtype=int32] b
          in (c,) }
    """
    lines = text.rstrip("\n").splitlines()
    marks = dict(mark or {})
    if keep is None:
        wanted = set(range(len(lines)))
    else:
        patterns = [keep] if isinstance(keep, str) else list(keep)
        patterns += list(marks)
        hits = [i for i, line in enumerate(lines) if any(re.search(p, line) for p in patterns)]
        wanted = {
            j for i in hits for j in range(i - context, i + context + 1) if 0 <= j < len(lines)
        }
        if lines:
            wanted |= {0, len(lines) - 1}
    out: list[str] = []
    marked: list[str] = []
    previous = -1
    for i in sorted(wanted):
        if i > previous + 1:
            out.append(_ELISION)
        line = lines[i]
        note = next((n for pattern, n in marks.items() if re.search(pattern, line)), None)
        if note is not None:
            marked.append(line)
            line = f"{line}   # <-- {note}"
        out.append(line)
        previous = i
    return Excerpt("\n".join(out), marked)


def show_jaxpr(
    fn: Callable[..., Any],
    *args: Any,
    keep: str | Sequence[str] | None = None,
    context: int = 0,
    mark: Mapping[str, str] | None = None,
    **kwargs: Any,
) -> Excerpt:
    """The jaxpr of ``fn(*args, **kwargs)``, cut down by :func:`cut`.

    Args:
        fn: the function to trace.
        *args: its arguments (arrays, or anything ``jax.make_jaxpr`` takes).
        keep: as for :func:`cut`.
        context: as for :func:`cut`.
        mark: as for :func:`cut`.
        **kwargs: its keyword arguments.

    Returns:
        The :class:`Excerpt`.

    Examples:
        >>> import jax.numpy as jnp
        >>> excerpt = show_jaxpr(lambda x: jnp.sin(x).astype(jnp.int32), 1.0,
        ...                      keep="convert", mark={"convert": "the cast"})
        >>> print(excerpt)
        { lambda ; a:f32[]. let
            ...
            c:i32[] = convert_element_type[new_dtype=int32...] b   # <-- the cast
          in (c,) }
        >>> "sin" in excerpt, len(excerpt.marked)
        (False, 1)
    """
    return cut(jaxpr_text(fn, *args, **kwargs), keep, context=context, mark=mark)


def count_primitives(
    fn_or_jaxpr: Callable[..., Any] | Jaxpr | ClosedJaxpr, *args: Any, **kwargs: Any
) -> Counter[str]:
    """How many times each primitive appears in a program, nested jaxprs included.

    ``fn_or_jaxpr`` is a (Closed)Jaxpr, or a function traced with ``*args,
    **kwargs``.  The count is static: both branches of a ``cond`` and a loop body
    count once each, and sub-jaxprs of ``jit``, ``scan``, ``custom_jvp_call`` etc.
    are walked as well as the equation that holds them.  Compare two variants'
    counters to see e.g. how many ``convert_element_type`` a fix adds.

    Returns:
        A ``Counter`` of primitive names.

    Examples:
        >>> import jax.numpy as jnp
        >>> count_primitives(lambda x: jnp.sin(x) * 2 + 1, 1.0)
        Counter({'sin': 1, 'mul': 1, 'add': 1})
    """
    if isinstance(fn_or_jaxpr, ClosedJaxpr):
        jaxpr = fn_or_jaxpr.jaxpr
    elif isinstance(fn_or_jaxpr, Jaxpr):
        jaxpr = fn_or_jaxpr
    else:
        jaxpr = jax.make_jaxpr(fn_or_jaxpr)(*args, **kwargs).jaxpr
    counts: Counter[str] = Counter()
    pending = [jaxpr]
    while pending:
        for eqn in pending.pop().eqns:
            counts[eqn.primitive.name] += 1
            pending.extend(jaxprs_in_params(eqn.params))
    return counts


# --------------------------------------------------------------------------- cond


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

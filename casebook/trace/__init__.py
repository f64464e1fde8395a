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

Import them from here.  They live in private modules, one concern each:
``_types`` (:func:`jax_type`, :func:`type_str`, :func:`types`), ``_drift``
(:class:`Drift`, :class:`DriftReport`, :func:`type_diff`, :func:`state_drift`),
``_structure`` (:class:`Leaf`, :class:`LeafList`, :func:`non_array_leaves`,
:func:`treedef_diff`), ``_jaxpr`` (:class:`Excerpt`, :func:`jaxpr_text`, :func:`cut`,
:func:`show_jaxpr`, :func:`count_primitives`), ``_cond`` (:class:`CondCall`,
:class:`CondCalls`, :func:`record_cond_branches`), and ``_common`` (:func:`shorten` and
the list type the results share).

Examples:
    >>> import jax.numpy as jnp
    >>> from casebook import trace
    >>> print(trace.type_diff({"n": jnp.asarray(0)}, {"n": jnp.int32(0)}))
    ['n']: weak_type i32[] weak -> i32[]
"""

from __future__ import annotations

from casebook.trace._common import shorten
from casebook.trace._cond import CondCall, CondCalls, record_cond_branches
from casebook.trace._drift import Drift, DriftReport, state_drift, type_diff
from casebook.trace._jaxpr import Excerpt, count_primitives, cut, jaxpr_text, show_jaxpr
from casebook.trace._structure import Leaf, LeafList, non_array_leaves, treedef_diff
from casebook.trace._types import jax_type, type_str, types

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

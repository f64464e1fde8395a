"""The user's callables called as optax calls them, abstractly, keeping Python values.

The ``callable`` family (:mod:`casebook.check._callables`) judges a mask or a label function by what
it returns where optax calls it: :func:`fixed_tree` tells a mask that returns the same
tree for the step count as for the params (so that ``inject_hyperparams`` calling it as a
schedule does no harm) and :func:`labels_work` a callable pytree that returns labels for
the params.  The calls run inside ``jax.eval_shape`` (no FLOPs); what they return is kept
as it is, so that Python bools and strings can be compared, which ``eval_shape``'s own
output (arrays only) could not.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from casebook.check._trees import Split


def _called(fn: Any, args: Any, build: Callable[[Any], Any] = lambda a: a) -> tuple[bool, Any]:
    """``(True, fn(build(args)))`` traced abstractly, or ``(False, the error)``; Python
    values come back as they are, arrays as tracers (only read)."""
    out: list[Any] = []
    try:
        jax.eval_shape(lambda a: out.append(fn(build(a))), args)
    except Exception as error:  # the user's callable fails on these arguments
        return False, error
    return True, out[0]


def _same_values(a: Any, b: Any) -> bool:
    """Whether two trees are the same tree of Python values (an array leaf, whose value
    an abstract call cannot tell, is the same only as itself)."""
    (la, ta), (lb, tb) = jax.tree.flatten(a), jax.tree.flatten(b)
    if ta != tb:  # type: ignore[operator]
        return False
    for x, y in zip(la, lb):
        if x is y:
            continue
        if isinstance(x, (jax.Array, np.ndarray)) or type(x) is not type(y):
            return False
        try:
            if not bool(x == y):
                return False
        except Exception:  # an object that does not compare to a bool
            return False
    return True


def fixed_tree(fn: Any, params: Split | None) -> bool:
    """Whether ``fn`` returns, for the step count, the same tree of Python values as for
    the params: a mask that ignores its argument, which works as a schedule too."""
    if params is None:
        return False
    count_ok, for_count = _called(fn, jax.ShapeDtypeStruct((), jnp.int32))
    params_ok, for_params = _called(fn, params.arrays, lambda a: params.combine(a, True))
    return count_ok and params_ok and _same_values(for_count, for_params)


def labels_work(labels: Any, params: Split | None) -> bool:
    """Whether a callable ``param_labels`` returns labels for the params (hashable
    Python values, not arrays), as ``multi_transform`` needs."""
    if params is None:
        return False
    ok, out = _called(labels, params.arrays, lambda a: params.combine(a, True))
    leaves = jax.tree.leaves(out) if ok else []
    try:
        hashes = [hash(x) for x in leaves if not isinstance(x, jax.Array)]
    except TypeError:  # an unhashable label
        return False
    return ok and len(hashes) == len(leaves)

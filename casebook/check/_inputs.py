"""The trees given to :func:`casebook.check.check_optimizer`: checked, completed, noted.

Grads or ``init_params`` that do not fit the params, and params with leaves but none to
take grads of, would otherwise fail deep inside ``jax.eval_shape`` with a message about
the check's own code; here they fail first, with a ``ValueError`` that names the argument,
shows what was found and says what to pass instead.  What the check has to assume about
the trees (the default grads, non-array leaves in the params, an empty tree, grads of
another precision than the params, an ``update`` without params) becomes a note of the
report.  The other arguments are :mod:`casebook.check._options`.  Kept apart from the bug
families: these are the user's arguments to the check, not bugs of the optimizer set-up.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from casebook import trace
from casebook.check._report import Finding
from casebook.check._trees import (
    Split,
    default_grads,
    describe,
    fast_part,
    grads_mismatch,
    is_inexact,
    leaves_found,
)

_LOW_PRECISION = (jnp.dtype(jnp.bfloat16), jnp.dtype(jnp.float16))


def checked_grads(params: Any, grads: Any, grads_dtype: Any) -> Any:
    """The abstract grads to step with: ``grads`` made abstract (once they are found to
    fit ``params``), or :func:`default_grads` when ``grads`` is None."""
    target = fast_part(params)
    if grads is None:
        grads_abs = default_grads(params, grads_dtype)
        if not jax.tree.leaves(grads_abs) and jax.tree.leaves(params):
            raise ValueError(
                "check_optimizer: params have no floating-point array leaf to default "
                f"the grads from; found {leaves_found(params)}.  Pass the arrays your "
                'optimizer trains (e.g. {"w": jnp.ones(3)}, or eqx.filter(model, '
                "eqx.is_inexact_array)), or grads= as your code computes them (None where "
                "it has no grads)"
            )
        return grads_abs
    mismatch = grads_mismatch(grads, params)
    if mismatch is not None and target is not None:
        mismatch = grads_mismatch(grads, target)
    if mismatch is not None:
        raise ValueError(
            "check_optimizer: grads do not match params (None may stand for any "
            f"subtree): {mismatch}; pass grads with the structure of params (what jax.grad "
            "of your loss gives), None where your code has no grads, or grads=None for "
            "zeros like the floating-point leaves of params"
        )
    g = Split.of(grads)
    return g.combine(g.arrays, keep_others=True)


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
                f"for any subtree): {trace.treedef_diff(params, init_params)}; pass what "
                "your code passes to init (e.g. eqx.filter(model, eqx.is_inexact_array)), "
                "or init_params=None for the params themselves"
            )
    return q


def _mixed_precision(grads: Any, params: Any) -> list[str]:
    """``"bf16 grads for f32 params (2 leaves)"`` for each pair of float dtypes in which
    the given grads differ from the params they update."""
    pairs: dict[tuple[str, str], int] = {}

    def leaf(g: Any, p: Any) -> None:
        if is_inexact(g) and is_inexact(p) and jnp.dtype(g.dtype) != jnp.dtype(p.dtype):
            key = (jnp.dtype(g.dtype).name, jnp.dtype(p.dtype).name)
            pairs[key] = pairs.get(key, 0) + 1

    try:
        jax.tree.map(leaf, grads, params, is_leaf=lambda x: x is None)
    except (ValueError, TypeError):  # grads of the fast params of LookaheadParams
        return []
    return [f"{g} grads for {p} params ({n} leaves)" for (g, p), n in sorted(pairs.items())]


def input_notes(
    p: Split, params: Any, grads: Any, grads_dtype: Any, no_params_argument: bool
) -> list[Finding]:
    """Notes on what the check assumed: non-array leaves, an empty tree, grads of another
    precision than the params, and an ``update`` that takes no params."""
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
    if not jax.tree.leaves(params):
        notes.append(
            Finding(
                "non-array leaf",
                "note",
                "params",
                f"an empty tree ({trace.shorten(repr(params), 30)}): init and update were "
                "traced on it, which checks only the state that does not depend on the "
                "params (step counts, injected hyperparameters); pass your params to "
                "check the rest",
            )
        )
    low = sorted(
        {
            str(x.dtype)
            for x in jax.tree.leaves(params)
            if is_inexact(x) and jnp.dtype(x.dtype) in _LOW_PRECISION
        }
    )
    if low and grads is None and grads_dtype is None:
        notes.append(
            Finding(
                "state drift",
                "note",
                "grads",
                f"checked with {'/'.join(low)} grads, like the params; if your grads "
                "are float32 (mixed precision), pass grads or grads_dtype=jnp.float32",
            )
        )
    fast = fast_part(params)
    mixed = [] if grads is None else _mixed_precision(grads, params if fast is None else fast)
    if mixed:
        notes.append(
            Finding(
                "state drift",
                "note",
                "grads",
                f"mixed precision: {', '.join(mixed)}, checked as given",
            )
        )
    if no_params_argument:
        notes.append(
            Finding(
                "crash",
                "note",
                "update",
                "update takes no params argument, so it was checked as update(grads, "
                "state), the only way your code can call it",
            )
        )
    return notes

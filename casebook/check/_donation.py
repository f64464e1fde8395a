"""The ``donation`` family of the check: an ``init`` state that cannot be donated.

A training step jitted with ``donate_argnums`` over the optimizer state hands the state's
buffers to XLA. When ``init`` returns the params' own arrays inside the state (prodigy's
``params0 = params``), or one array in two fields (cocob's zeros), the first such step
fails (``Attempt to use a buffer that was previously donated``, ``Attempt to donate the
same buffer twice``; ``book/check-findings``, finding 10). The jaxpr of ``init`` shows it
without running anything: an output that is an input, or one output twice. The check
looks for it when told that the step donates the state (``donate_state=True``): a step
that does not donate it is not affected.
"""

from __future__ import annotations

from typing import Any

import jax
from jax.extend import core as jcore

from casebook.check._report import Finding
from casebook.check._trees import Split

_WHY = (
    "a jitted step that donates the state fails on its first call; copy it once: "
    "jax.tree.map(jnp.copy, opt.init(params))"
)


def donation_errors(optimizer: Any, q: Split) -> list[Finding]:
    """An error for each leaf of ``init``'s state that is a leaf of the params, or the same
    array as an earlier leaf of the state."""
    try:
        closed, shape = jax.make_jaxpr(
            lambda arrays: optimizer.init(q.combine(arrays, True)), return_shape=True
        )(q.arrays)
    except Exception:  # init_state reports init's failures
        return []
    jaxpr = closed.jaxpr
    in_paths = [path for path, is_array in zip(q.paths, q.is_array) if is_array]
    out_paths = [jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_flatten_with_path(shape)[0]]
    inputs = {id(v): i for i, v in enumerate(jaxpr.invars)}
    seen: dict[int, str] = {}
    found = []
    for path, var in zip(out_paths, jaxpr.outvars, strict=True):
        if isinstance(var, jcore.Literal):
            continue
        if id(var) in inputs:
            what = f"is the params' own array params{in_paths[inputs[id(var)]]}"
        elif id(var) in seen:
            what = f"is the same array as state{seen[id(var)]}"
        else:
            seen[id(var)] = path
            continue
        found.append(Finding("donated state", "error", f"state{path}", what, _WHY))
    return found

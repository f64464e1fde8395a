"""Case 8, optax PR #1059: schedule-free's fresh state holds the params' own arrays.

The builders of the set-ups that ``case.toml``'s ``[[check]]`` entries name; the rest of the
case is that file, ``scripts/`` and the program ``aliasing``
(:func:`~casebook.cases._base.read_case`).
"""

from __future__ import annotations

from typing import Any

from casebook.cases._base import read_case


def schedule_free_donated() -> dict[str, Any]:
    """``schedule_free_sgd`` checked as a step that donates its state: on optax 0.2.3 the
    state's ``z`` is the params' own arrays, which the donated-state check reports."""
    import jax.numpy as jnp
    import optax

    params = {"w": jnp.ones((4, 4)), "b": jnp.zeros(4)}
    return {
        "optimizer": optax.contrib.schedule_free_sgd(1e-2),
        "params": params,
        "donate_state": True,
    }


CASE = read_case(__file__, schedule_free_donated)

"""Case 6, optax#969: eager ``radam`` updates leak device memory.

The builders of the set-ups that ``case.toml``'s ``[[check]]`` entries name; the rest of the
case is that file, ``scripts/`` (:func:`~casebook.cases._base.read_case`) and the program
``leak`` (live arrays per eager step, with each fix and without).
"""

from __future__ import annotations

from typing import Any

from casebook.cases._base import read_case


def eager_radam() -> dict[str, Any]:
    """The card's set-up: ``radam`` on a two-leaf model, as ``check_optimizer`` takes it."""
    import jax.numpy as jnp
    import optax

    params = {"w": jnp.zeros((256, 256)), "b": jnp.zeros(256)}
    return {"optimizer": optax.radam(1e-3), "params": params, "update_params": False}


CASE = read_case(__file__, eager_radam)

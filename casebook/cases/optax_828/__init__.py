"""Case 1, optax#828: ``zero_nans()`` inside ``MultiSteps``; a bool state leaf turns int32.

The builders of the set-ups that ``case.toml``'s ``[[check]]`` entries name; the rest of the
case is that file and ``scripts/`` (:func:`~casebook.cases._base.read_case`).
"""

from __future__ import annotations

from typing import Any

from casebook.cases._base import read_case


def zero_nans_in_multisteps() -> dict[str, Any]:
    """The reporter's set-up: ``MultiSteps`` around ``chain(zero_nans(), sgd)``."""
    import jax.numpy as jnp
    import optax

    opt = optax.MultiSteps(optax.chain(optax.zero_nans(), optax.sgd(0.1)), every_k_schedule=2)
    return {"optimizer": opt, "params": {"w": jnp.ones(3)}}


CASE = read_case(__file__, zero_nans_in_multisteps)

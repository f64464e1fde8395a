"""Case 6, optax#969: Memory leak in optax.radam.

The builders of the set-ups that ``case.toml``'s ``[[check]]`` entries name; the rest of the
case is that file and ``scripts/`` (:func:`~casebook.cases._base.read_case`).
"""

from __future__ import annotations

from typing import Any

from casebook.cases._base import read_case


def reported_setup() -> dict[str, Any]:
    """The reporter's optimizer set-up, as keyword arguments of ``check_optimizer``
    (``optimizer``, ``params`` and any of its options): import jax, optax... in here."""
    raise NotImplementedError("optax-969: write the set-up the check must flag (CONTRIBUTING.md)")


CASE = read_case(__file__, reported_setup)

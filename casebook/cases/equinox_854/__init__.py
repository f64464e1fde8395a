"""Case 7, equinox#854: a weak type breaks equinox's closure conversion (jax 0.4.32).

The builders of the set-ups that ``case.toml``'s ``[[check]]`` entries name; the rest of the
case is that file, ``scripts/`` and the programs ``closure`` and ``compiles``
(:func:`~casebook.cases._base.read_case`).
"""

from __future__ import annotations

from typing import Any

from casebook.cases._base import read_case


def counting(start: Any) -> Any:
    """A gradient transformation that passes gradients through and counts its steps in its
    state, starting from ``start``: the pattern of diffrax's ``num_steps = 0``."""
    import jax.numpy as jnp
    import optax

    def init(params):
        return {"count": start}

    def update(updates, state, params=None):
        return updates, {"count": state["count"] + jnp.int32(1)}

    return optax.GradientTransformation(init, update)


def weak_scalar_state() -> dict[str, Any]:
    """A step counter that starts as the Python int ``0``: weakly typed in ``init``, strong
    after one update, so a jitted step is traced and compiled once more (a note, no error)."""
    import jax.numpy as jnp

    return {"optimizer": counting(0), "params": {"w": jnp.ones(3)}, "steps": 2}


def strong_scalar_state() -> dict[str, Any]:
    """Fix B's form of the same counter: ``jnp.asarray(0, jnp.int32)``, the same type in
    every step."""
    import jax.numpy as jnp

    start = jnp.asarray(0, jnp.int32)
    return {"optimizer": counting(start), "params": {"w": jnp.ones(3)}, "steps": 2}


CASE = read_case(__file__, weak_scalar_state, strong_scalar_state)

"""Case 4, optax#1210: ``optax.lbfgs`` under x64 in a scan; an int64 counter comes back int32.

The builders of the set-ups that ``case.toml``'s ``[[check]]`` entries name; the rest of the
case is that file and ``scripts/`` (:func:`~casebook.cases._base.read_case`).
"""

from __future__ import annotations

from typing import Any

from casebook.cases._base import read_case


def rosenbrock(x: Any) -> Any:
    """The Rosenbrock function, summed over consecutive pairs."""
    import jax.numpy as jnp

    return jnp.sum((1 - x[:-1]) ** 2 + 100 * (x[1:] - x[:-1] ** 2) ** 2)


def lbfgs_rosenbrock() -> dict[str, Any]:
    """``optax.lbfgs`` on Rosenbrock, with the line-search arguments; run it with x64 on."""
    import jax
    import jax.numpy as jnp
    import optax

    x = jnp.zeros(8)
    value, grad = jax.value_and_grad(rosenbrock)(x)
    return {
        "optimizer": optax.lbfgs(),
        "params": x,
        "grads": grad,
        "update_kwargs": dict(value=value, grad=grad, value_fn=rosenbrock),
    }


CASE = read_case(__file__, lbfgs_rosenbrock)

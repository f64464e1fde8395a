"""Case 3, optax#1017: ``optax.lbfgs`` on an Equinox model.

The builders of the set-ups that ``case.toml``'s ``[[check]]`` entries name; the rest of the
case is that file and ``scripts/`` (:func:`~casebook.cases._base.read_case`).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from casebook.cases._base import read_case


@cache
def _mlp_problem() -> tuple[Any, Any, Any, Any]:
    """An Equinox MLP (activation functions as leaves), its loss, value and grads;
    built once (cached), shared by the set-ups below."""
    import equinox as eqx
    import jax
    import jax.numpy as jnp

    mlp = eqx.nn.MLP(2, 1, 8, 1, key=jax.random.key(1))
    x, y = jax.random.normal(jax.random.key(2), (16, 2)), jnp.ones((16, 1))

    def model_loss(m):
        return jnp.mean((jax.vmap(m)(x) - y) ** 2)

    value, grads = eqx.filter_value_and_grad(model_loss)(mlp)
    return mlp, model_loss, value, grads


def whole_model() -> dict[str, Any]:
    """Traps 2 and 3: the whole model as ``params``, and a ``value_fn`` of the model."""
    import optax

    mlp, model_loss, value, grads = _mlp_problem()
    return {
        "optimizer": optax.lbfgs(),
        "params": mlp,
        "grads": grads,
        "update_kwargs": dict(value=value, grad=grads, value_fn=model_loss),
    }


def partitioned() -> dict[str, Any]:
    """Fix B: the array part of the model, and a ``value_fn`` that rebuilds the model."""
    import equinox as eqx
    import optax

    mlp, model_loss, value, grads = _mlp_problem()
    params, static = eqx.partition(mlp, eqx.is_array)

    def array_loss(p):
        return model_loss(eqx.combine(p, static))

    return {
        "optimizer": optax.lbfgs(),
        "params": params,
        "grads": grads,
        "update_kwargs": dict(value=value, grad=grads, value_fn=array_loss),
    }


CASE = read_case(__file__, whole_model, partitioned)

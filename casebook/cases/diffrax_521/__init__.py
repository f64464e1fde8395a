"""Case 5, diffrax#521: a model holding a ``PIDController`` passed whole to ``MultiSteps``.

The builders of the set-ups that ``case.toml``'s ``[[check]]`` entries name; the rest of the
case is that file and ``scripts/`` (:func:`~casebook.cases._base.read_case`).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from casebook.cases._base import read_case


@cache
def neural_ode() -> tuple[Any, Any, Any]:
    """A tiny neural ODE that owns a ``PIDController`` (whose ``norm`` is the function
    ``rms_norm``), its inexact arrays, and the grads of a loss. Built once (cached):
    the grads run a solve, and every set-up below shares them."""
    import diffrax
    import equinox as eqx
    import jax
    import jax.numpy as jnp

    class NeuralODE(eqx.Module):
        weight: jax.Array  # the vector field is tanh(weight @ y)
        controller: diffrax.PIDController

        def __call__(self, y0):
            term = diffrax.ODETerm(lambda t, y, args: jnp.tanh(self.weight @ y))
            solution = diffrax.diffeqsolve(
                term, diffrax.Tsit5(), 0.0, 1.0, 0.1, y0, stepsize_controller=self.controller
            )
            return solution.ys[-1]

    model = NeuralODE(
        0.5 * jax.random.normal(jax.random.key(0), (2, 2)),
        diffrax.PIDController(rtol=1e-3, atol=1e-6),
    )
    grads = eqx.filter_grad(lambda m: jnp.sum(m(jnp.ones(2)) ** 2))(model)
    return model, eqx.filter(model, eqx.is_inexact_array), grads


def neural_ode_setup(params: str, inner: str = "multisteps") -> dict[str, Any]:
    import equinox as eqx
    import optax

    model, arrays, grads = neural_ode()
    opt = (
        optax.MultiSteps(optax.adam(1e-3), every_k_schedule=4)
        if inner == "multisteps"
        else optax.adam(1e-3)
    )
    chosen = {"model": model, "arrays": eqx.filter(model, eqx.is_array), "inexact": arrays}
    return {"optimizer": opt, "params": chosen[params], "grads": grads, "init_params": arrays}


def whole_model() -> dict[str, Any]:
    """The report: ``init`` gets the arrays, ``update`` the whole model."""
    return neural_ode_setup("model")


def fix_a() -> dict[str, Any]:
    """Fix A: ``update`` gets ``eqx.filter(model, eqx.is_array)``."""
    return neural_ode_setup("arrays")


def fix_b() -> dict[str, Any]:
    """Fix B: the inexact arrays everywhere."""
    return neural_ode_setup("inexact")


def plain_adam() -> dict[str, Any]:
    """Plain ``adam`` never reads ``params``, so the whole model passes."""
    return neural_ode_setup("model", inner="adam")


CASE = read_case(__file__, whole_model, fix_a, fix_b, plain_adam)

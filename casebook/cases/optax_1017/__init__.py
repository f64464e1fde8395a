"""Case 3, optax#1017: ``optax.lbfgs`` on an Equinox model.

The card, the error the notebook asserts, the board's row (the reporter's call shape,
``update`` without ``params``) and the set-ups the lessons page checks.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from casebook.cases._base import Case, CheckSetup, ExpectedError, Trigger, read_issue

DOCNAME = "notebooks/03-optax-1017-lbfgs-equinox"
ISSUE = read_issue(__file__)
URL = ISSUE.url

TRIGGERS = (
    Trigger(
        "optax#1017",
        "optax.lbfgs on an Equinox model, update without params",
        URL,
        DOCNAME,
        """
import jax, jax.numpy as jnp, equinox as eqx, optax
model = eqx.nn.MLP(2, 1, 4, 1, key=jax.random.key(0))
x, y = jnp.ones((8, 2)), jnp.zeros((8, 1))
loss = lambda m: jnp.mean((jax.vmap(m)(x) - y) ** 2)
opt = optax.lbfgs()
state = opt.init(eqx.filter(model, eqx.is_inexact_array))
grads = eqx.filter_grad(loss)(model)
opt.update(grads, state)  # the reporter's call: no params, no value, grad or value_fn
result = "fixed"
""",
        "still failing",
    ),
)


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


CASE = Case(
    number=3,
    key="optax-1017",
    issue=ISSUE,
    libraries=("optax", "equinox", "jax"),
    affected=("optax==0.2.3", "optax==0.2.4", "optax==0.2.5", "optax==0.2.8"),
    first_fixed=None,
    fix_commits=(),
    docname=DOCNAME,
    summary="`optax.lbfgs` on an Equinox model: `update` without `params` fails on any "
    "model; with them, tree arithmetic reaches the non-array leaves",
    errors=(
        ExpectedError(
            "make_step (update without params)",
            "ValueError",
            "NoneType",
            "optax.tree_utils.tree_sub (_tree_math.py), while tracing the step",
        ),
        ExpectedError(
            "update(grads, state), in the reporter's stack (jax 0.4.30)",
            "ValueError",
            r"^Custom node type mismatch: expected type: <class 'equinox\.nn\._mlp\.MLP'>, "
            r"value: None\.$",
            "optax.tree_utils.tree_vdot (_tree_math.py), called by L-BFGS's update_fn",
            release="era:optax-1017",
        ),
    ),
    triggers=TRIGGERS,
    checks=(
        CheckSetup("whole model", True, whole_model),
        CheckSetup("partitioned (fix B)", False, partitioned),
    ),
)

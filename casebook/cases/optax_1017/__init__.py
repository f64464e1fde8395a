"""Case 3, optax#1017: ``optax.lbfgs`` on an Equinox model.

The card, the error the notebook asserts, the board's row (the reporter's call shape,
``update`` without ``params``) and the set-ups the lessons page checks.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from casebook.cases._base import Case, CheckSetup, ExpectedError, Message, Trigger, read_issue

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


# The programs of the registry's messages: a small MLP (``relu``, or ``tanh`` as on the page),
# its loss, and each mistake on top. Each raises its message on its stack (tests/test_errors.py).
_RELU = """
import jax, jax.numpy as jnp, equinox as eqx, optax
model = eqx.nn.MLP(2, 1, 4, 1, key=jax.random.PRNGKey(0))
x, y = jnp.ones((8, 2)), jnp.zeros((8, 1))
loss = lambda m: jnp.mean((jax.vmap(m)(x) - y) ** 2)
"""
_TANH = _RELU.replace("key=jax.random.PRNGKey(0)", "activation=jnp.tanh, key=jax.random.PRNGKey(0)")
_NO_PARAMS = """
optim = optax.lbfgs()
state = optim.init(eqx.filter(model, eqx.is_inexact_array))
grads = eqx.filter_grad(loss)(model)
optim.update(grads, state)  # the reporter's call: no params
"""
_WHOLE_MODEL = """
optim = optax.lbfgs()
state = optim.init(eqx.filter(model, eqx.is_inexact_array))
value, grads = eqx.filter_value_and_grad(loss)(model)
optim.update(grads, state, model, value=value, grad=grads, value_fn=loss)  # params=model
"""
_DICT_NO_PARAMS = """
import jax, jax.numpy as jnp, optax
params = {"w": jnp.ones(3)}
optim = optax.lbfgs()
grads = jax.grad(lambda p: jnp.sum(p["w"] ** 2))(params)
optim.update(grads, optim.init(params))  # no params
"""


def _neighbour(api: str, exc_type: str, text: str, code: str) -> Message:
    """A wording of the same mistake through another optax call on today's stack (relu MLP)."""
    return Message(
        text,
        exc_type,
        "current",
        "jax 0.12 (today)",
        _RELU + code,
        api,
        "case3-neighbours",
    )


MESSAGES = (
    Message(
        "pytree structure error: different types at key path\n"
        "    tree_map tree\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
        "    <class 'NoneType'>\n"
        "but at the same key path the full pytree has a subtree of different type\n"
        "    <class 'equinox.nn._mlp.MLP'>.",
        "ValueError",
        "current",
        "jax 0.12 (today; since 0.10.2 by jax's history)",
        _TANH + _NO_PARAMS,
        "optax.lbfgs().update without params (optax.tree_utils.tree_sub)",
        "case3-repro",
        today=True,
    ),
    Message(
        "Custom node type mismatch: expected type: <class 'equinox.nn._mlp.MLP'>, value: None.",
        "ValueError",
        "era:optax-1017",
        "jax 0.4.30 (the report's stack; until 0.4.33 by jax's history)",
        _RELU + _NO_PARAMS,
        "optax.lbfgs().update without params (optax.tree_utils.tree_vdot)",
        "case3-wordings",
    ),
    Message(
        "Expected None, got MLP(",
        "ValueError",
        "era:diffrax-521",
        "jax 0.4.35 to 0.6.2 (measured; 0.4.34 to 0.10.1 by jax's history)",
        _RELU + _NO_PARAMS,
        "optax.lbfgs().update without params (optax.tree_utils.tree_sub)",
        "case3-wordings",
    ),
    Message(
        "Expected dict, got None.",
        "ValueError",
        "era:optax-1017",
        "jax 0.4.30 (the report's stack; until 0.4.33 by jax's history)",
        _DICT_NO_PARAMS,
        "optax.lbfgs().update without params, dict params",
        "case3-traceback",
    ),
    Message(
        "unsupported operand type(s) for -: 'jaxlib._jax.PjitFunction' and 'NoneType'",
        "TypeError",
        "current",
        "jax 0.12 (today), with a jitted activation such as jnp.tanh",
        _TANH + _WHOLE_MODEL,
        "optax.lbfgs().update, the whole model as params (tanh)",
        "case3-traps",
        today=True,
    ),
    Message(
        "'jaxlib._jax.PjitFunction' object has no attribute 'shape'",
        "AttributeError",
        "current",
        "jax 0.12 (today), with a jitted activation such as jnp.tanh",
        _TANH + "optax.lbfgs().init(model)  # the whole model\n",
        "optax.lbfgs().init(model) (tanh)",
        "case3-traps",
    ),
    Message(
        "scale_by_zoom_linesearch.<locals>.update_fn() missing 3 required keyword-only "
        "arguments: 'value', 'grad', and 'value_fn'",
        "TypeError",
        "current",
        "optax 0.2.8 (today)",
        _TANH
        + """
params, static = eqx.partition(model, eqx.is_inexact_array)
optim = optax.lbfgs()
grads = eqx.filter_grad(loss)(model)
optim.update(grads, optim.init(params), params)  # no value, grad, value_fn
""",
        "optax.lbfgs().update without the line search's arguments",
        "case3-traps",
    ),
    Message(
        "'NoneType' object is not callable",
        "TypeError",
        "current",
        "jax 0.12 (today)",
        _TANH
        + """
params, static = eqx.partition(model, eqx.is_inexact_array)
optim = optax.lbfgs()
value, grads = eqx.filter_value_and_grad(loss)(model)
optim.update(grads, optim.init(params), params, value=value, grad=grads, value_fn=loss)
""",
        "optax.lbfgs().update, value_fn of the whole model on the filtered params",
        "case3-traps",
        today=True,
        distinctive=False,  # any code can print it: listed, not answered alone
    ),
    _neighbour(
        "optax.lbfgs().update, the whole model as params",
        "TypeError",
        "unsupported operand type(s) for -: 'custom_jvp' and 'NoneType'",
        _WHOLE_MODEL,
    ),
    _neighbour(
        "optax.adam().init(model)",
        "TypeError",
        "zeros_like requires ndarray or scalar arguments, got "
        "<class 'jax._src.custom_derivatives.custom_jvp'> at position 0.",
        "optax.adam(1e-3).init(model)  # the whole model\n",
    ),
    _neighbour(
        "optax.apply_updates(model, updates)",
        "TypeError",
        "unsupported operand type(s) for +: 'custom_jvp' and 'NoneType'",
        "optax.apply_updates(model, eqx.filter_grad(loss)(model))  # the whole model\n",
    ),
    _neighbour(
        "optax.adamw().update without params",
        "ValueError",
        "You are using a transformation that requires the current value of parameters, but you "
        "are not passing `params` when calling `update`.",
        """
optim = optax.adamw(1e-3)
grads = eqx.filter_grad(loss)(model)
optim.update(grads, optim.init(eqx.filter(model, eqx.is_inexact_array)))  # no params
""",
    ),
    _neighbour(
        "optax.scale_by_lbfgs().update without params",
        "TypeError",
        "scale_by_lbfgs.<locals>.update_fn() missing 1 required positional argument: 'params'",
        """
optim = optax.scale_by_lbfgs()
grads = eqx.filter_grad(loss)(model)
optim.update(grads, optim.init(eqx.filter(model, eqx.is_inexact_array)))  # no params
""",
    ),
    Message(
        "pytree structure error: different types at key path\n"
        "    tree_map tree\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
        "    <class 'NoneType'>\n"
        "but at the same key path the full pytree has a subtree of different type\n"
        "    <class 'dict'>.",
        "ValueError",
        "current",
        "jax 0.12 (today; since 0.10.2 by jax's history)",
        _DICT_NO_PARAMS,
        "optax.lbfgs().update without params, dict params",
        "case3-neighbours",
    ),
)

FIX = """\
import equinox as eqx
import jax
import jax.numpy as jnp
import optax

model = eqx.nn.MLP(1, 1, 6, 2, activation=jnp.tanh, key=jax.random.PRNGKey(0))
x = jnp.linspace(-2, 2, 32)[:, None]
y = jnp.sin(2 * x)
loss = lambda m: jnp.mean((jax.vmap(m)(x) - y) ** 2)

params, static = eqx.partition(model, eqx.is_inexact_array)  # arrays | the rest
optim = optax.lbfgs()
opt_state = optim.init(params)


@jax.jit
def make_step(params, opt_state):
    value_fn = lambda p: loss(eqx.combine(p, static))  # rebuilds the model
    value, grads = jax.value_and_grad(value_fn)(params)
    updates, opt_state = optim.update(
        grads, opt_state, params, value=value, grad=grads, value_fn=value_fn
    )
    return value, optax.apply_updates(params, updates), opt_state


for step in range(8):
    value, params, opt_state = make_step(params, opt_state)
    print(f"step {step}: loss {value:.6f}")
model = eqx.combine(params, static)  # the trained model, functions included"""

WHY = (
    "`optax.lbfgs` is not a drop-in for `adam`: every `update` computes `params - "
    "state.params` with optax's tree arithmetic, which maps over every leaf of every tree it "
    "gets. Without `params` that is `None` minus your model, and jax names only the tree's "
    "root. With the whole model as `params`, its activation functions are leaves too, and "
    "meet the `None`s that `eqx.filter` left in the state. The default zoom line search then "
    "calls `value_fn` on the filtered tree, whose activations are `None`. optax cannot tell "
    "parameters from functions: split the model yourself."
)

STILL_OPEN = (
    "No release changes this: optax#1017 was closed with the advice to filter, equinox#796 "
    "(let optax take a Module whole) is open, and optax 0.2.3 to 0.2.8 behave alike. The "
    "message is jax's, names the tree's root rather than the leaf at fault, and was reworded "
    "in jax 0.4.34 and 0.10.2. `optax.value_and_grad_from_state` saves one evaluation per "
    "step but returns the stored value and gradient unchecked: with minibatches it silently "
    "uses the previous batch's. A fresh `lbfgs` state shares one buffer between two memories,"
    " so donating it fails until you copy it."
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
    messages=MESSAGES,
    fix=FIX,
    why=WHY,
    still_open=STILL_OPEN,
)

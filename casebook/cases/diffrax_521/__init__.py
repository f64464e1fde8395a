"""Case 5, diffrax#521: a model holding a ``PIDController`` passed whole to ``MultiSteps``.

The card, the error the notebook asserts, the board's row and the set-ups the lessons page
checks.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from casebook.cases._base import Case, CheckSetup, ExpectedError, Message, Trigger, read_issue

DOCNAME = "notebooks/05-diffrax-521-pidcontroller-multisteps"
ISSUE = read_issue(__file__)
URL = ISSUE.url

TRIGGERS = (
    Trigger(
        "diffrax#521",
        "a model holding a PIDController passed whole to MultiSteps",
        URL,
        DOCNAME,
        """
import jax, jax.numpy as jnp, equinox as eqx, optax, diffrax
class Model(eqx.Module):
    w: jax.Array
    controller: diffrax.PIDController
model = Model(jnp.ones(2), diffrax.PIDController(rtol=1e-3, atol=1e-6))
opt = optax.MultiSteps(optax.adam(1e-3), every_k_schedule=2)
state = opt.init(eqx.filter(model, eqx.is_inexact_array))
grads = eqx.filter(model, eqx.is_inexact_array)
opt.update(grads, state, model)
result = "fixed"
""",
        "still failing",
    ),
)


# A model that holds a PIDController (its field ``norm`` is the function ``rms_norm``), the
# arrays ``init`` gets, and the same arrays as gradients: the set-up of every message's code.
_MODEL = """import diffrax, equinox as eqx, jax, jax.numpy as jnp, optax
class Model(eqx.Module):
    weight: jax.Array
    controller: diffrax.AbstractStepSizeController
model = Model(jnp.ones((2, 2)), diffrax.PIDController(rtol=1e-3, atol=1e-6))
arrays = eqx.filter(model, eqx.is_inexact_array)
"""
_MULTISTEPS = (
    _MODEL
    + """optim = optax.MultiSteps(optax.adam(1e-2), every_k_schedule=4)
eqx.filter_jit(optim.update)(arrays, optim.init(arrays), model)
"""
)
_PID = """import diffrax, jax
pid = diffrax.PIDController(rtol=1e-3, atol=1e-6)
"""
_BARE_COND = """import jax
def rms_norm(y): return y
jax.lax.cond(True, lambda op: 0.0, lambda op: 1.0, rms_norm)
"""


def _whole_model(optimizer: str) -> str:
    """``optimizer.update`` with the filtered gradients and the whole model as ``params``."""
    return _MODEL + f"optim = {optimizer}\noptim.update(arrays, optim.init(arrays), model)\n"


_ARGUMENT = (
    "Argument '<function rms_norm at 0x…>' of type '<class 'function'>' is not a valid JAX type"
)
_VALUE = "Value <function rms_norm at 0x…> with type <class 'function'> is not a valid JAX type"
_STRUCTURE = (
    "pytree structure error: different types at key path\n    tree_map tree.controller.rtol\n"
    "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
    "    <class 'NoneType'>\n"
    "but at the same key path the full pytree has a subtree of different type\n"
    "    <class 'float'>."
)
_OLD_DOOR = (
    "Error interpreting argument to <function chain.<locals>.update_fn at 0x…> as an abstract "
    "array. The problematic value is of type <class 'function'> and was passed to the function "
    "at path params.controller.norm."
)

MESSAGES = (
    Message(
        _ARGUMENT,
        "TypeError",
        "current",
        "jax 0.5.1 to 0.12 (today)",
        _MULTISTEPS,
        "optax.MultiSteps.update (optax 0.1.8 and later), at its lax.cond, under eqx.filter_jit",
        "case5-repro",
        today=True,
    ),
    Message(
        _ARGUMENT,
        "TypeError",
        "current",
        "jax 0.5.1 to 0.12 (today)",
        _PID + "jax.lax.cond(True, lambda c: 0.0, lambda c: 1.0, pid)\n",
        "jax.lax.cond with a PIDController as operand",
        "case5-root-cause",
        today=True,
    ),
    Message(
        _VALUE,
        "TypeError",
        "era:diffrax-521",
        "jax 0.4.25 to 0.4.35 (the report's, on jax 0.4.35)",
        _MULTISTEPS,
        "optax.MultiSteps.update (optax 0.2.3), at its lax.cond, under eqx.filter_jit",
        "case5-wordings",
    ),
    Message(
        _VALUE,
        "TypeError",
        "era:optax-828",
        "jax 0.4.25 to 0.4.35",
        _BARE_COND,
        "jax.lax.cond with a function as operand",
        "case5-wordings",
    ),
    Message(
        _OLD_DOOR,
        "TypeError",
        "optax==0.1.7",
        "optax 0.0.9 to 0.1.7 (run here on jax 0.12)",
        _MULTISTEPS,
        "optax.MultiSteps.update up to optax 0.1.7, at its jax.eval_shape",
        "case5-releases",
    ),
    Message(
        "Error interpreting argument to <function <lambda> at 0x…> as an abstract array. The "
        "problematic value is of type <class 'function'> and was passed to the function at path "
        "c.norm.",
        "TypeError",
        "current",
        "jax 0.12 (today)",
        _PID + "jax.eval_shape(lambda c: 0.0, pid)\n",
        "jax.eval_shape with a PIDController as argument",
        "case5-root-cause",
    ),
    Message(
        _OLD_DOOR,  # the same words as optax 0.1.7's eval_shape: jax's, for any traced argument
        "TypeError",
        "current",
        "jax 0.12 (today)",
        _MODEL
        + "optim = optax.adam(1e-2)\njax.jit(optim.update)(arrays, optim.init(arrays), model)\n",
        "jax.jit(optimizer.update), any optimizer (here adam), the whole model as params",
        "case5-neighbours",
    ),
    Message(
        "zeros_like requires ndarray or scalar arguments, got <class 'function'> at position 0.",
        "TypeError",
        "current",
        "jax 0.12 (today)",
        _MODEL
        + "optim = optax.MultiSteps(optax.adam(1e-2), every_k_schedule=4)\noptim.init(model)\n",
        "optimizer.init (adam, MultiSteps, ...) given the whole model",
        "case5-faq",
    ),
    Message(
        _STRUCTURE,
        "ValueError",
        "current",
        "optax 0.2.8 on jax 0.12 (today)",
        _whole_model("optax.masked(optax.adam(1e-2), lambda p: jax.tree.map(eqx.is_array, p))"),
        "optax.masked with a mask function, the whole model as params",
        "case5-neighbours",
    ),
    Message(
        _STRUCTURE,
        "ValueError",
        "current",
        "optax 0.2.8 on jax 0.12 (today)",
        _whole_model(
            "optax.multi_transform({'adam': optax.adam(1e-2)}, "
            "lambda p: jax.tree.map(lambda _: 'adam', p))"
        ),
        "optax.multi_transform, the whole model as params",
        "case5-neighbours",
    ),
    Message(
        _STRUCTURE,
        "ValueError",
        "current",
        "optax 0.2.8 on jax 0.12 (today)",
        _whole_model("optax.lamb(1e-2)"),
        "optax.lamb (likewise lars, adafactor), the whole model as params",
        "case5-neighbours",
    ),
    Message(
        "Value '<function rms_norm at 0x…>' with dtype object is not a valid JAX array type. "
        "Only arrays of numeric types are supported by JAX.",
        "TypeError",
        "current",
        "optax 0.2.8 on jax 0.12 (today)",
        _whole_model("optax.inject_hyperparams(optax.adam)(learning_rate=1e-2)"),
        "optax.inject_hyperparams(...).update (it asks for the dtype of params)",
        "case5-neighbours",
    ),
)

#: The card's "Do this": the page's cell after the repro, a script that runs on today's release.
FIX = """\
import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import optax


class NeuralODE(eqx.Module):
    linear: eqx.nn.Linear
    controller: diffrax.AbstractStepSizeController  # PIDController.norm is a function

    def __call__(self, y0):
        term = diffrax.ODETerm(lambda t, y, args: jnp.tanh(self.linear(y)))
        solution = diffrax.diffeqsolve(term, diffrax.Tsit5(), 0.0, 0.5, 0.1, y0, stepsize_controller=self.controller)
        return solution.ys[-1]

model = NeuralODE(eqx.nn.Linear(2, 2, key=jax.random.key(0)), diffrax.PIDController(rtol=1e-3, atol=1e-6))
optim = optax.MultiSteps(optax.adam(1e-2), every_k_schedule=4)
opt_state = optim.init(eqx.filter(model, eqx.is_inexact_array))

@eqx.filter_jit
def step(model, opt_state, y0, target):
    loss = lambda m: jnp.mean((jax.vmap(m)(y0) - target) ** 2)
    grads = eqx.filter_grad(loss)(model)
    params = eqx.filter(model, eqx.is_inexact_array)  # the arrays only, as in init
    updates, opt_state = optim.update(grads, opt_state, params)
    return eqx.apply_updates(model, updates), opt_state  # applied to the whole model

for y0 in jax.random.normal(jax.random.key(1), (4, 8, 2)):  # 4 microbatches of 8 states
    model, opt_state = step(model, opt_state, y0, 0.5 * y0)"""

#: The card's "Why": one line of the page's card.
WHY = (
    "`MultiSteps.update` hands `params` to `jax.lax.cond` as an operand (optax 0.0.9 to 0.1.7: to"
    " `jax.eval_shape`), and jax gives every leaf of an operand an abstract type before it traces"
    " either branch. You passed the whole model as `params`; it holds a `diffrax.PIDController`, "
    "whose field `norm` is the Python function `rms_norm`, and a function has no JAX type. Plain "
    "`adam` never reads `params`, and `ConstantStepSize` has no fields, which is why either "
    "change seems to fix it."
)

#: The card's "Still open": one line of the page's card.
STILL_OPEN = (
    "No library changed: optax takes `params` to be a pytree of arrays and checks nothing, and "
    "the error from `MultiSteps` names the function but not its path, `.controller.norm`. The "
    "filter fixes every optax call that gets the filtered tree; given the whole model, `masked`, "
    "`multi_transform`, `lamb`, `lars` and `adafactor` fail with `ValueError: pytree structure "
    "error` at the first non-array leaf (`.controller.rtol`, a float), `lbfgs` and "
    "`inject_hyperparams` fail on the controller too, and `jax.jit(optim.update)` rejects "
    "`rms_norm` for any optimizer, `adam` included. Weight decay is not broken in general: "
    "`adamw` and `add_decayed_weights` skip the leaves where the filtered gradient is `None`, so "
    "they accept the whole model (exercise 2). And apply the updates to the whole model: a model "
    "that went through `eqx.filter` has lost its controller's fields (`norm=None`), and its next "
    "solve fails."
)


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


CASE = Case(
    number=5,
    key="diffrax-521",
    issue=ISSUE,
    libraries=("optax", "equinox", "diffrax", "jax"),
    affected=("optax==0.1.7", "optax==0.1.8", "optax==0.2.3", "optax==0.2.8"),
    first_fixed=None,
    fix_commits=(),
    docname=DOCNAME,
    summary="a model holding a `PIDController` passed whole to `MultiSteps`",
    errors=(
        ExpectedError(
            "MultiSteps.update(grads, state, model)",
            "TypeError",
            "rms_norm.* is not a valid JAX type",
            "MultiSteps.update, while eqx.filter_jit traces the step",
        ),
        ExpectedError(
            "MultiSteps.update(grads, state, model), in the stack of the report's day",
            "TypeError",
            "^Value <function rms_norm at 0x[0-9a-f]+> with type <class 'function'> "
            "is not a valid JAX type$",
            "transforms/_accumulation.py:update, at the lax.cond, under eqx.filter_jit",
            release="era:diffrax-521",
        ),
    ),
    triggers=TRIGGERS,
    checks=(
        CheckSetup("whole model", True, whole_model),
        CheckSetup("fix A", False, fix_a),
        CheckSetup("fix B", False, fix_b),
        CheckSetup("adam, whole model", False, plain_adam),
    ),
    messages=MESSAGES,
    fix=FIX,
    why=WHY,
    still_open=STILL_OPEN,
)

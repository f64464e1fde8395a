"""Case 2, optax#1373: an Equinox module as the ``adamw`` mask under
``inject_hyperparams`` is called as a schedule.

The card, the error the notebook asserts, the board's two rows (the bug, and the silent
mask-function variant found in case 2) and the set-ups the lessons page checks.
"""

from __future__ import annotations

from typing import Any

from casebook.cases._base import Case, CheckSetup, ExpectedError, Message, Trigger, read_issue

DOCNAME = "notebooks/02-optax-1373-callable-mask-inject"
ISSUE = read_issue(__file__)
URL = ISSUE.url

TRIGGERS = (
    Trigger(
        "optax#1373",
        "an Equinox module as the adamw mask under inject_hyperparams",
        URL,
        DOCNAME,
        """
import jax, jax.numpy as jnp, equinox as eqx, optax
class Net(eqx.Module):
    w: jax.Array
    b: jax.Array
    def __call__(self, x, y):
        return x
net = Net(jnp.ones((2, 2)), jnp.zeros(2))
mask = Net(True, False)
optax.inject_hyperparams(optax.adamw)(learning_rate=1e-3, mask=mask).init(net)
result = "fixed"
""",
        "still failing",
    ),
    Trigger(
        "mask function",
        "inject_hyperparams(adamw)(mask=lambda p: ...): weight decay "
        "silently off (found in case 2)",
        URL,
        DOCNAME,
        """
import jax, jax.numpy as jnp, optax
params = {"w": jnp.ones((2, 2)), "b": jnp.ones(2)}
grads = jax.tree.map(jnp.zeros_like, params)
kw = dict(learning_rate=1.0, weight_decay=0.5)
mask = lambda p: jax.tree.map(lambda x: x.ndim > 1, p)
got, _ = optax.inject_hyperparams(optax.adamw)(mask=mask, **kw).update(
    grads, optax.inject_hyperparams(optax.adamw)(mask=mask, **kw).init(params), params)
want, _ = optax.adamw(mask=mask, **kw).update(grads, optax.adamw(mask=mask, **kw).init(params), params)
assert float(want["w"][0, 0]) == -0.5 and float(want["b"][0]) == 0.0  # the reference decays w
result = "fixed" if float(got["w"][0, 0]) == -0.5 else "silent"
""",
        "silent",
    ),
)

#: The card's "Do this": the page's cell after the repro, which runs on today's release.
FIX = """\
import equinox as eqx
import jax
import jax.numpy as jnp
import optax


class Net(eqx.Module):
    mlp: eqx.nn.MLP

    def __init__(self, *, key):
        self.mlp = eqx.nn.MLP(in_size=2, out_size="scalar", width_size=2, depth=1, key=key)

    def __call__(self, x, y, key=None):
        return self.mlp(x) + y


params, static = eqx.partition(Net(key=jax.random.key(0)), eqx.is_inexact_array)
get_weights = lambda net: [linear.weight for linear in net.mlp.layers]
weight_mask = eqx.tree_at(get_weights, jax.tree.map(lambda _: False, params), [True, True])
lr = optax.cosine_decay_schedule(0.01, 100)
# The mask is data, not a schedule: name it in static_args (optax 0.2.4 or later).
optim = optax.inject_hyperparams(optax.adamw, static_args="mask")(
    learning_rate=lr, eps=1e-3, mask=weight_mask
)
opt_state = optim.init(params)
grads = jax.tree.map(jnp.ones_like, params)
updates, opt_state = jax.jit(optim.update)(grads, opt_state, params)
print("injected:", sorted(opt_state.hyperparams))"""

#: The card's "Why" (one paragraph, as the page prints it).
WHY = (
    "`inject_hyperparams` treats every callable argument as a schedule unless `static_args` "
    "names it, as its docstring says, and an Equinox module is callable because its class "
    "defines `__call__`. The mask is built from the parameters, so it is an instance of the "
    "model's class: `init` wraps it as a schedule and calls it with the step count, and "
    "`Net.__call__(x, y)` gets the count as `x` and no `y`. Plain `adamw` accepts the same "
    "mask because its `masked` has, since optax 0.2.4, called a mask only when all its leaves "
    "are callable, and these leaves are bools."
)

#: The card's "Still open" (one paragraph, as the page prints it).
STILL_OPEN = (
    "Documented but surprising behaviour, not a bug awaiting a fix: optax 0.2.8 still asks "
    "`callable(value)` of every hyperparameter. `static_args` covers only the arguments you "
    "name; it needs optax 0.2.4 or later (before, `masked` calls the module itself, "
    "optax#913), it follows the argument's name (open pull request #1635 would rename "
    "`mask`), and a static argument leaves the optimizer state, so it cannot be changed "
    "during training. Another callable hyperparameter left out of `static_args` is still "
    "called with the step count: a genuine mask function raises nothing and silently switches "
    "weight decay off. And `optax.partition` (`multi_transform`) still calls a label tree "
    "that is an Equinox module; pass `param_labels=lambda params: labels` there."
)

#: A two-leaf Equinox model with a two-argument ``__call__`` and its mask, an instance of the
#: same class: the set-up of the messages' programs below.
_NET = """\
import jax, jax.numpy as jnp, equinox as eqx, optax
class Net(eqx.Module):
    w: jax.Array
    b: jax.Array
    def __call__(self, x, y):
        return self.w @ x + self.b + y
params = Net(jnp.ones((2, 2)), jnp.zeros(2))
mask = Net(True, False)
"""
_MISSING_Y = "Net.__call__() missing 1 required positional argument: 'y'"
_INJECT_INIT = "optax.inject_hyperparams(optax.adamw)(learning_rate=1e-3, mask=mask).init(params)\n"
_AFFINE_UNDER_JIT = """\
import jax, jax.numpy as jnp, equinox as eqx, optax
class Affine(eqx.Module):  # a mask module whose __call__ takes one argument
    w: object
    b: object
    def __call__(self, x):
        return self.w * x + self.b
params = Affine(jnp.ones((2, 2)), jnp.ones(2))
opt = optax.inject_hyperparams(optax.adamw)(learning_rate=0.01, mask=Affine(True, False))
jax.jit(opt.update)(params, opt.init(params), params)
"""

#: Every wording the page asserts, and the same mistake's through neighbouring APIs, each
#: raised by its ``code`` on its ``stack``.
MESSAGES = (
    Message(
        _MISSING_Y,
        "TypeError",
        "current",
        "optax 0.2.8 on jax 0.12 (today); the same on every optax release run here",
        _NET + _INJECT_INIT,
        "inject_hyperparams(adamw)(mask=module).init",
        "case2-repro",
        today=True,
    ),
    Message(
        _MISSING_Y,
        "TypeError",
        "era:optax-1373",
        "jax 0.6.2, optax 0.2.5 (the reporter's stack)",
        _NET + _INJECT_INIT,
        "inject_hyperparams(adamw)(mask=module).init",
        "case2-wordings",
    ),
    Message(
        _MISSING_Y,
        "TypeError",
        "optax==0.2.3",
        "optax 0.2.3 and older (before the #913 fix, released in 0.2.4)",
        _NET + "optax.adamw(1e-3, mask=mask).init(params)\n",
        "adamw(mask=module).init, through optax.masked, without inject_hyperparams",
        "case2-releases",
    ),
    Message(
        _MISSING_Y,
        "TypeError",
        "optax==0.2.3",
        "optax 0.2.3 and older (before the #913 fix, released in 0.2.4)",
        _NET + "optax.masked(optax.add_decayed_weights(1e-4), mask).init(params)\n",
        "optax.masked(inner, mask=module).init",
        "case2-releases",
    ),
    Message(
        "Cannot determine dtype of Net(w=True, b=False)",
        "TypeError",
        "optax==0.2.4",
        "optax 0.2.3 and 0.2.4 (from 0.2.5 it passes, and the mask travels in the state)",
        _NET + _INJECT_INIT.replace("mask=mask", "mask=lambda p: mask"),
        "inject_hyperparams(adamw)(mask=lambda p: module).init",
        "case2-releases",
    ),
    Message(
        _MISSING_Y,
        "TypeError",
        "current",
        "optax 0.2.8 on jax 0.12 (today); the same in the reporter's stack",
        _NET
        + "labels = Net('sgd', 'sgd')\n"
        + "optax.partition({'sgd': optax.sgd(0.1)}, labels).init(params)\n",
        "optax.partition (also optax.multi_transform), param_labels=module, .init",
        "case2-root-cause",
        today=True,
    ),
    Message(
        "Attempted boolean conversion of traced array with shape int32[].\n"
        "The error occurred while tracing the function update_fn at",
        "TracerBoolConversionError",
        "current",
        "jax 0.12 (today), and jax 0.6.2 in the reporter's stack",
        _AFFINE_UNDER_JIT,
        "inject_hyperparams(adamw)(mask=module with a one-argument __call__).update under jit",
        "case2-ex1",
    ),
)


def net_and_masks() -> tuple[Any, Any, Any]:
    """A two-leaf Equinox module with a two-argument ``__call__``, its weight mask (an
    instance of the same class, so callable) and a mask *function* of the params."""
    import equinox as eqx
    import jax
    import jax.numpy as jnp

    class Net(eqx.Module):
        weight: jax.Array
        bias: jax.Array

        def __call__(self, x, y):
            return self.weight @ x + self.bias + y

    def ndim_mask(p):
        return jax.tree.map(lambda x: x.ndim > 1, p)

    mask = Net(True, False)  # type: ignore[arg-type]  # the same class, bools as leaves
    return Net(jnp.ones((2, 2)), jnp.zeros(2)), mask, ndim_mask


def adamw_setup(mask_kind: str, static: bool, inject: bool = True) -> dict[str, Any]:
    import optax

    net, module_mask, function_mask = net_and_masks()
    mask = module_mask if mask_kind == "module" else function_mask
    if not inject:
        return {"optimizer": optax.adamw(1e-3, mask=mask), "params": net}
    wrap = optax.inject_hyperparams(optax.adamw, static_args="mask" if static else ())
    return {"optimizer": wrap(1e-3, mask=mask), "params": net}


def module_mask() -> dict[str, Any]:
    """The report: an Equinox module as the mask under ``inject_hyperparams``."""
    return adamw_setup("module", static=False)


def mask_function() -> dict[str, Any]:
    """The silent variant: a mask function, called with the step count."""
    return adamw_setup("function", static=False)


def module_mask_static() -> dict[str, Any]:
    """The user-side fix: ``static_args="mask"``."""
    return adamw_setup("module", static=True)


def mask_function_static() -> dict[str, Any]:
    """The mask function, with ``static_args="mask"``."""
    return adamw_setup("function", static=True)


def plain_adamw_module_mask() -> dict[str, Any]:
    """Plain ``adamw`` takes the module mask as a tree."""
    return adamw_setup("module", static=False, inject=False)


CASE = Case(
    number=2,
    key="optax-1373",
    issue=ISSUE,
    libraries=("optax", "equinox", "jax"),
    affected=("optax==0.2.3", "optax==0.2.4", "optax==0.2.5", "optax==0.2.8"),
    first_fixed=None,
    fix_commits=(),
    docname=DOCNAME,
    summary="an Equinox module as the `adamw` mask under `inject_hyperparams` is called "
    "as a schedule",
    errors=(
        ExpectedError(
            "inject_hyperparams(adamw)(mask=module).init",
            "TypeError",
            r"Net\.__call__\(\) missing 1 required positional argument: 'y'",
            "WrappedSchedule.__call__ in optax/schedules/_inject.py",
            "optax==0.2.5",
        ),
        ExpectedError(
            "the reporter's code, in the reporter's stack (jax 0.6.2, optax 0.2.5)",
            "TypeError",
            r"^Net\.__call__\(\) missing 1 required positional argument: 'y'$",
            "WrappedSchedule.__call__ in optax/schedules/_inject.py",
            "era:optax-1373",
        ),
    ),
    triggers=TRIGGERS,
    checks=(
        CheckSetup("module mask", True, module_mask),
        CheckSetup("mask function", True, mask_function),
        CheckSetup("module mask, static_args", False, module_mask_static),
        CheckSetup("mask function, static_args", False, mask_function_static),
        CheckSetup("plain adamw, module mask", False, plain_adamw_module_mask),
    ),
    messages=MESSAGES,
    fix=FIX,
    why=WHY,
    still_open=STILL_OPEN,
)

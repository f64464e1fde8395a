"""Case 2, optax#1373: an Equinox module as the ``adamw`` mask under
``inject_hyperparams`` is called as a schedule.

The card, the error the notebook asserts, the board's two rows (the bug, and the silent
mask-function variant found in case 2) and the set-ups the lessons page checks.
"""

from __future__ import annotations

from typing import Any

from casebook.cases._base import Case, CheckSetup, ExpectedError, Trigger, read_issue

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
)

"""Case 2, optax#1373: an Equinox module as the ``adamw`` mask under

The builders of the set-ups that ``case.toml``'s ``[[check]]`` entries name; the rest of the
case is that file and ``scripts/`` (:func:`~casebook.cases._base.read_case`).
"""

from __future__ import annotations

from typing import Any

from casebook.cases._base import read_case


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


CASE = read_case(
    __file__,
    module_mask,
    mask_function,
    module_mask_static,
    mask_function_static,
    plain_adamw_module_mask,
)

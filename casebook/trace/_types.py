"""Compact abstract types of values and pytrees: :func:`jax_type`, :func:`type_str`,
:func:`types`.

The base of :mod:`casebook.trace`: drift and cond records are written in these types
(``'i32[] weak'``), the way a jaxpr shows them.
"""

from __future__ import annotations

from typing import Any

import jax

_PYTHON_SCALARS = (bool, int, float, complex)

_typeof = getattr(jax, "typeof", None) or jax.core.get_aval  # type: ignore[attr-defined]  # jax < 0.6


def jax_type(x: Any) -> Any | None:
    """The abstract value JAX would give ``x``, or None if ``x`` is not a JAX type.

    Args:
        x: any object: an array, a ``ShapeDtypeStruct``, a Python number, a function...

    Returns:
        ``jax.typeof(x)``, or None where JAX refuses ``x`` (a function, a string).

    Examples:
        >>> import jax.numpy as jnp
        >>> jax_type(jnp.ones(3, jnp.int32))
        ShapedArray(int32[3])
        >>> jax_type(print) is None
        True
    """
    try:
        return _typeof(x)
    except TypeError:
        return None


def type_str(x: Any) -> str:
    """Compact abstract type of one value, as it appears in a jaxpr.

    Arrays, ``ShapeDtypeStruct``s, tracers and NumPy values give e.g. ``'f32[3]'``,
    ``'bool[]'``, ``'key<fry>[]'``, with ``' weak'`` appended for weakly typed values
    (``'i32[] weak'``).  Python scalars, which JAX treats as weakly typed, are shown as
    what they are, ``'float (python)'``; so is any other non-JAX object
    (``'function (python)'``).

    Args:
        x: one value (a leaf of a pytree).

    Returns:
        Its type as text.

    Examples:
        >>> import jax.numpy as jnp
        >>> type_str(jnp.ones((2, 3), jnp.bfloat16)), type_str(jnp.asarray(1)), type_str(0.5)
        ('bf16[2,3]', 'i32[] weak', 'float (python)')
    """
    aval = None if isinstance(x, _PYTHON_SCALARS) else jax_type(x)
    if aval is None:
        return f"{type(x).__name__} (python)"
    text = aval.str_short(short_dtypes=True)
    return f"{text} weak" if getattr(aval, "weak_type", False) else text


def types(tree: Any) -> Any:
    """The pytree ``tree`` with every leaf replaced by its :func:`type_str`.

    Examples:
        >>> import jax.numpy as jnp
        >>> types({"w": jnp.ones(2), "count": 3})
        {'count': 'int (python)', 'w': 'f32[2]'}
    """
    return jax.tree.map(type_str, tree)

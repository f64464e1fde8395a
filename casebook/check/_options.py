"""The options of :func:`casebook.check.check_optimizer`, checked before anything runs.

An option of the wrong kind (an optimizer class, a float number of steps, ``steps=10**6``,
``grads_dtype="f32"`` or ``jnp.int32``, ``grads_dtype`` next to ``grads``, a ``strict``
that is not a bool) would otherwise fail deep inside ``jax.eval_shape`` or NumPy with a
message about the check's own code, run for an hour, or be ignored without a word; here
it fails first, with a ``TypeError`` or ``ValueError`` that starts ``check_optimizer:``,
names the argument and says what to pass instead.  Also here: whether ``update`` can take
params at all (its signature), which decides how the check calls it.  The trees (params,
grads, ``init_params``) are :mod:`casebook.check._inputs`.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from casebook import trace
from casebook.check._run import MAX_EXPLICIT_STEPS

_DTYPES = 'jnp.float32, "float32" or jnp.bfloat16'


def _optimizer(optimizer: Any) -> None:
    if inspect.isclass(optimizer):
        example = (
            "optax.MultiSteps(optax.adam(1e-3), every_k_schedule=4)"
            if optimizer.__name__ == "MultiSteps"
            else f"{optimizer.__name__}(...)"
        )
        raise TypeError(
            f"check_optimizer needs an optax GradientTransformation, got the class "
            f"{optimizer.__name__} itself: create one first, e.g. {example}"
        )
    if not (
        callable(getattr(optimizer, "init", None)) and callable(getattr(optimizer, "update", None))
    ):
        raise TypeError(
            f"check_optimizer needs an optax GradientTransformation (with init and "
            f"update), got {type(optimizer).__name__}: {trace.shorten(repr(optimizer), 60)}"
        )


def _steps(steps: Any) -> None:
    if steps is None:
        return
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)):
        raise TypeError(
            "check_optimizer: steps must be an int (or None: step until the state's "
            f"types settle), got {type(steps).__name__} {trace.shorten(repr(steps), 40)}"
        )
    if steps < 1:
        raise ValueError(
            "check_optimizer: steps must be at least 1 (or None: step until the "
            f"state's types settle), got {steps}"
        )
    if steps > MAX_EXPLICIT_STEPS:
        raise ValueError(
            f"check_optimizer: steps={steps} is more than MAX_EXPLICIT_STEPS "
            f"({MAX_EXPLICIT_STEPS}): each step is one more trace, and once a step keeps "
            "the state's types every later step does too; pass steps=None to step until "
            f"they settle, or at most {MAX_EXPLICIT_STEPS}"
        )


def validate(
    optimizer: Any,
    steps: Any,
    update_kwargs: Any,
    update_params: Any,
    strict: Any,
    donate_state: Any = False,
) -> bool | str:
    """Clear errors for the inputs that would otherwise fail deep inside the check.

    Returns:
        ``update_params`` as ``True``, ``False`` or ``"both"`` (``None`` means
        ``False``: the params that ``update(grads, state)`` sees).
    """
    _optimizer(optimizer)
    _steps(steps)
    if update_kwargs is not None and not (
        isinstance(update_kwargs, Mapping) and all(isinstance(k, str) for k in update_kwargs)
    ):
        raise TypeError(
            "check_optimizer: update_kwargs must be a mapping of keyword arguments for "
            f"update (str keys), e.g. dict(value=loss), got {type(update_kwargs).__name__} "
            f"{trace.shorten(repr(update_kwargs), 40)}"
        )
    if update_params is None:
        update_params = False
    both = isinstance(update_params, str) and update_params == "both"
    if not (isinstance(update_params, (bool, np.bool_)) or both):
        raise ValueError(
            'check_optimizer: update_params must be True, False or "both" (True: '
            "update(grads, state, params); False, or None: update(grads, state)), got "
            f"{type(update_params).__name__} {trace.shorten(repr(update_params), 40)}"
        )
    if not isinstance(donate_state, (bool, np.bool_)):
        raise TypeError(
            "check_optimizer: donate_state must be True (your jitted step donates the "
            "optimizer state) or False, got "
            f"{type(donate_state).__name__} {trace.shorten(repr(donate_state), 40)}"
        )
    if not isinstance(strict, (bool, np.bool_)):
        raise TypeError(
            "check_optimizer: strict must be True (raise OptimizerCheckError on an "
            "error) or False (return the report), got "
            f"{type(strict).__name__} {trace.shorten(repr(strict), 40)}"
        )
    return "both" if both else bool(update_params)


def checked_dtype(grads: Any, grads_dtype: Any) -> Any:
    """``grads_dtype`` as a dtype (None stays None), once it is found to be a
    floating-point dtype that JAX has enabled, given without ``grads``."""
    if grads_dtype is None:
        return None
    if grads is not None:
        raise ValueError(
            "check_optimizer: grads and grads_dtype were both given, and grads_dtype "
            "would be ignored (given grads keep their own dtypes): pass grads cast as your "
            "code casts them (e.g. jax.tree.map(lambda g: g.astype(jnp.bfloat16), grads)), "
            "or grads_dtype without grads, not both"
        )
    shown = trace.shorten(repr(grads_dtype), 40)
    if hasattr(grads_dtype, "shape"):
        raise TypeError(
            f"check_optimizer: grads_dtype must be a dtype, got an array ({shown}): pass "
            f"its .dtype, or a floating-point dtype such as {_DTYPES}"
        )
    try:
        dtype = jnp.dtype(grads_dtype)
    except Exception:  # NumPy's TypeError (or another error) for what it cannot read
        raise TypeError(
            f"check_optimizer: grads_dtype={shown} is not a dtype: pass a floating-point "
            f"dtype such as {_DTYPES}"
        ) from None
    if not jnp.issubdtype(dtype, jnp.inexact):
        raise TypeError(
            f"check_optimizer: grads_dtype={dtype} is not a floating-point dtype, and "
            f"grads always are (jax.grad refuses {dtype} inputs): pass a floating-point "
            f"dtype such as {_DTYPES}, or None for each leaf's own dtype"
        )
    if jax.dtypes.canonicalize_dtype(dtype) != dtype:  # float64 with x64 off
        raise ValueError(
            f"check_optimizer: grads_dtype={dtype} needs 64-bit types, which JAX has "
            "disabled (the check runs under the current configuration): enable them as "
            'your program does, jax.config.update("jax_enable_x64", True), or pass '
            "jnp.float32"
        )
    return dtype


def update_takes_params(optimizer: Any, kwargs: Mapping[str, Any]) -> bool:
    """Whether ``optimizer.update`` can be called with params (False only when its
    signature takes ``(grads, state)`` and no third argument)."""
    try:
        signature = inspect.signature(optimizer.update)
    except (TypeError, ValueError):  # a builtin or a callable without a signature
        return True
    try:
        signature.bind(None, None, None, **kwargs)
        return True
    except TypeError:
        pass
    try:
        signature.bind(None, None, **kwargs)
    except TypeError:
        return True  # neither way binds: the call will say what is wrong
    return False

"""The check itself: :func:`check_optimizer`, which puts the parts of the package together.

It validates the arguments (:mod:`casebook.check._options`, :mod:`casebook.check._inputs`),
looks for callable data among the hyperparameters (:mod:`casebook.check._callables`),
traces ``init`` and each way of calling ``update`` (:mod:`casebook.check._run`, which
hands the states to the families),
asks :mod:`casebook.check._leaves` whether an ``update`` that fails at once fails on
state that ``init`` built for leaves without grads, and tidies the report.  Public
through :mod:`casebook.check`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Literal

from casebook.check._callables import callable_findings
from casebook.check._donation import donation_errors
from casebook.check._inputs import checked_grads, checked_init_params, input_notes
from casebook.check._leaves import gradless_init
from casebook.check._options import checked_dtype, update_takes_params, validate
from casebook.check._report import CheckReport
from casebook.check._run import Run, init_state
from casebook.check._trees import Split

UpdateParams = bool | Literal["both"] | None


def check_optimizer(
    optimizer: Any,
    params: Any,
    grads: Any = None,
    *,
    steps: int | None = None,
    update_kwargs: Mapping[str, Any] | None = None,
    init_params: Any = None,
    strict: bool = False,
    update_params: UpdateParams = True,
    grads_dtype: Any = None,
    donate_state: bool = False,
) -> CheckReport:
    """Trace ``optimizer.init`` and ``update`` steps abstractly; report the book's bugs.

    Args:
        optimizer: an optax ``GradientTransformation`` (an instance, not a class).
        params: what your code passes to ``update``; may be a whole model (an Equinox
            module with functions in it, say): the check tells you whether optax touches
            its non-array leaves.  An empty tree (``None``, ``{}``) is checked too, with
            a note: only the state that does not depend on the params (step counts,
            injected hyperparameters) can be seen then.
        grads: what your code passes as the updates.  Defaults to zeros like the
            floating-point array leaves of ``params`` (of ``params.fast`` for
            ``optax.LookaheadParams``) and ``None`` at every other leaf, as
            ``eqx.filter_grad`` gives.  ``None`` may stand in for any subtree.  Given
            grads keep their dtypes: bf16 grads of a bf16 compute copy with float32
            ``params`` (the master weights) is how to check mixed precision (a note says
            so); pass the copy as ``params`` and the master weights as ``init_params``
            if your ``update`` gets the copy.
        steps: how many ``update`` steps to trace, 1 to :data:`MAX_EXPLICIT_STEPS`;
            ``None`` (the default) steps until the state's types stop changing (at most
            :data:`MAX_STEPS`).
        update_kwargs: passed to every ``update`` call (``value=``, ``grad=``,
            ``value_fn=`` for ``optax.lbfgs``).
        init_params: what your code passes to ``init`` when that differs from
            ``params`` (the equinox FAQ's ``eqx.filter(model, eqx.is_inexact_array)``).
        strict: raise :class:`OptimizerCheckError` instead of returning a report with
            errors.
        update_params: how your code calls ``update``: ``True`` with params,
            ``False`` (or ``None``) as ``update(grads, state)``, ``"both"`` to check
            both ways (a failure without params is then only a note, since many
            transformations need them).  An ``update`` whose signature takes no params
            argument is checked as ``update(grads, state)`` whatever this says, with a
            note.
        grads_dtype: the floating-point dtype of the default grads (e.g.
            ``jnp.float32`` for bf16 params with f32 grads, or ``"bfloat16"``); defaults
            to each leaf's own dtype.  Only without ``grads``.
        donate_state: whether your jitted step donates the optimizer state
            (``donate_argnums``): then a state leaf that ``init`` fills with the params'
            own array, or with an array another leaf holds, is an error (the first
            donated step fails; ``book/check-findings``, finding 10).

    Returns:
        The findings, as a :class:`CheckReport`.  The check runs under the current JAX
        configuration, so enable x64 first if your program does.

    Raises:
        TypeError: ``optimizer`` is not a ``GradientTransformation`` (or is a class);
            ``steps`` is not an int; ``update_kwargs`` is not a mapping with str keys;
            ``strict`` or ``donate_state`` is not a bool; ``grads_dtype`` is not a dtype (``"f32"``, an
            array) or not a floating-point one (``jnp.int32``).
        ValueError: ``grads`` or ``init_params`` do not fit ``params``; ``params`` have
            leaves but no floating-point one to default the grads from (the message
            lists the leaves found); ``steps`` is < 1 or > :data:`MAX_EXPLICIT_STEPS`;
            ``update_params`` is not one of its values; both ``grads`` and
            ``grads_dtype`` are given; ``grads_dtype`` is a 64-bit type with x64 off.
            Every message names the argument and what to pass instead.
        OptimizerCheckError: with ``strict=True``, when the report has an error.

    Examples:
        A set-up without the book's bugs:

        >>> import jax.numpy as jnp, optax
        >>> print(check_optimizer(optax.adam(1e-3), {"w": jnp.ones(3)}))
        check_optimizer: init and 1 update step(s) traced; 0 error(s), 0 warning(s); nothing found

        bf16 params with float32 grads (mixed precision): ``adam``'s first moment turns
        float32 in the first step, which a ``lax.scan`` over the steps refuses:

        >>> report = check_optimizer(
        ...     optax.adam(1e-3), {"w": jnp.ones(3, jnp.bfloat16)}, grads_dtype=jnp.float32
        ... )
        >>> print(report)
        check_optimizer: init and 2 update step(s) traced; 1 error(s), 0 warning(s)
          ERROR   family 1, ...: state[0].mu['w']: step 1: dtype bf16[3] -> f32[3] (...)
          family 1, ...: its cases and fixes: https://.../book/lessons.html#family-drift
        >>> report.ok, report.families(), report.errors[0].where
        (False, {'state drift'}, "state[0].mu['w']")

        In a test, ``strict=True`` raises instead:

        >>> check_optimizer(optax.monitor({"n": optax.tree.norm}), jnp.ones(4), strict=True)
        Traceback (most recent call last):
            ...
        casebook.check._report.OptimizerCheckError: check_optimizer: init and 1 update step(s) traced; 1 error(s), 0 warning(s)
          ERROR   family 1, ...: state.measurements: step 1: structure {} -> {'n': *} (...)
    """
    how = validate(optimizer, steps, update_kwargs, update_params, strict, donate_state)
    dtype = checked_dtype(grads, grads_dtype)
    p = Split.of(params)
    grads_abs = checked_grads(params, grads, dtype)
    q = checked_init_params(p, params, init_params)
    kwargs = dict(update_kwargs or {})
    no_params_argument = how is not False and not update_takes_params(optimizer, kwargs)
    ways: tuple[bool, ...] = (False,) if no_params_argument or how is False else (True,)
    if how == "both" and not no_params_argument:
        ways = (True, False)
    report = CheckReport(steps=0)
    report.extend(callable_findings(optimizer, q))
    report.extend(input_notes(p, params, grads, dtype, no_params_argument))
    state = init_state(optimizer, q, report)
    if state is None:
        return _finish(report, strict)
    if donate_state:
        report.extend(donation_errors(optimizer, q))
    for with_params in ways:
        run = Run(
            optimizer,
            p,
            grads_abs,
            kwargs,
            with_params,
            report,
            optional=len(ways) == 2 and not with_params,
        )
        report.steps = max(report.steps, run.run(state, steps))
        if run.failed is not None:
            k, error = run.failed
            run.failed = None
            if not (
                k == 1
                and _blame_init(
                    optimizer,
                    q,
                    grads_abs,
                    init_params if init_params is not None else params,
                    error,
                    run,
                    steps,
                    report,
                )
            ):
                run.crash(k, error)
    return _finish(report, strict)


def _blame_init(
    optimizer: Any,
    q: Split,
    grads: Any,
    init_params: Any,
    error: BaseException,
    run: Run,
    steps: int | None,
    report: CheckReport,
) -> bool:
    """When ``update`` fails because ``init`` built state for leaves that get no grads
    (an int position, a bool buffer, a PRNG key, a frozen layer), say so and go on from
    an ``init`` of the leaves that do get grads.  Returns whether it was that."""
    blamed = gradless_init(optimizer, q, grads, init_params, error, run.update)
    if blamed is None:
        return False
    state, finding = blamed
    report.append(finding)
    report.steps = max(report.steps, run.run(state, steps))
    if run.failed is not None:
        run.crash(run.failed[0], run.failed[1])
    return True


SWITCH_OFF_ENV = "CASEBOOK_CHECK_OFF"
"""Families named here (comma-separated) are dropped from every report: how
``tests/test_lessons_families.py`` proves that the lessons page fails without each family.
Never set it in real use."""


def _switched_off() -> set[str]:
    return {f.strip() for f in os.environ.get(SWITCH_OFF_ENV, "").split(",") if f.strip()}


def _finish(report: CheckReport, strict: bool) -> CheckReport:
    """Drop the notes about non-array leaves that an error already names, point a crash
    to the callable hyperparameter that explains it; maybe raise."""
    off = _switched_off()
    if off:
        report[:] = [f for f in report if f.family not in off]
    named = " ".join(f.where for f in report.errors if f.family == "non-array leaf")
    report[:] = [f for f in report if not (f.severity == "note" and f"{f.where} =" in named)]
    if any(f.family == "callable hyperparameter" for f in report.errors):
        report[:] = [
            replace(f, why="probably caused by the callable hyperparameter above")
            if f.family == "crash" and f.severity == "error" and not f.why
            else f
            for f in report
        ]
    return report.raise_if_problems() if strict else report

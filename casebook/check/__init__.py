"""Does my optimizer set-up have one of the casebook's bugs?  Find out before it crashes.

:func:`check_optimizer` takes an optax ``GradientTransformation``, the params (and
optionally the grads and the extra keyword arguments of ``update``), and traces
``init`` and ``update`` steps with ``jax.eval_shape``: no compile, no FLOPs.  It steps
until the state's types stop changing, so a drift that shows only at step 3 is found.
It looks for the three families of bugs in the book:

1. **State drift** (cases 1 and 4): a state leaf whose dtype, weak type, shape or tree
   structure changes across a step, and the branches of a ``lax.cond`` or ``lax.switch``
   inside ``update`` that disagree on a type.  Such a state breaks ``lax.scan``,
   ``lax.cond``, checkpoint round trips, or costs a retrace.
2. **Non-array leaves that optax touches** (cases 3 and 5): functions, strings or other
   objects in params or grads that ``init`` or ``update`` tries to trace or to do
   arithmetic on, and state that ``init`` built for leaves that get no grads.  Non-array
   leaves that optax never reads are listed as a note only.
3. **Callable data taken for a schedule** (case 2): a hyperparameter of
   ``inject_hyperparams`` that is not a schedule of the step count (a mask, labels or
   dimension numbers, or a callable that returns something other than a number), and
   ``param_labels`` of ``multi_transform``/``partition`` that is a callable pytree
   (see ``casebook.check._callables``).

The result is a :class:`CheckReport`: a list of :class:`Finding`, readable as text and
as an HTML table, with :meth:`CheckReport.raise_if_problems`.  Failures inside the
user's code become findings with the exception's type and first line, not tracebacks.
What the check cannot see: values (a NaN that sticks, a mask that is well typed but
wrong), and anything your training loop does outside ``init`` and ``update``.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

import jax
import jax.numpy as jnp
import numpy as np
from jax.tree_util import keystr

from casebook import trace
from casebook.check._branches import error_findings, recorded_findings
from casebook.check._callables import callable_findings
from casebook.check._report import CheckReport, Finding, OptimizerCheckError, Severity, first_line

__all__ = ["CheckReport", "Finding", "OptimizerCheckError", "check_optimizer", "default_grads"]

UpdateParams = bool | Literal["both"]

_ARRAYS = (jax.Array, jax.ShapeDtypeStruct, np.ndarray, np.generic)
_PYTHON_NUMBERS = (bool, int, float, complex)
_LOW_PRECISION = (jnp.dtype(jnp.bfloat16), jnp.dtype(jnp.float16))
MAX_STEPS = 16  # steps=None stops here if the state's types never settle
_WHY = {
    "dtype": "lax.scan, lax.cond and checkpoint restores need identical dtypes",
    "shape": "lax.scan and lax.cond need identical shapes",
    "structure": "the state cannot be fed back as the same tree",
    "weak_type": "harmless for lax.scan/cond; a jitted step traces once more",
}


# --------------------------------------------------------------------------- pytrees


def _abstract(x: Any, dtype: Any = None) -> jax.ShapeDtypeStruct:
    """A ``ShapeDtypeStruct`` for an array leaf (keeping its weak type unless ``dtype``)."""
    if not isinstance(x, (jax.ShapeDtypeStruct, jax.Array)):
        x = jnp.asarray(x)
    if dtype is not None:
        return jax.ShapeDtypeStruct(x.shape, dtype)
    return jax.ShapeDtypeStruct(x.shape, x.dtype, weak_type=bool(getattr(x, "weak_type", False)))


def _is_inexact(x: Any) -> bool:
    return isinstance(x, _ARRAYS) and jnp.issubdtype(x.dtype, jnp.inexact)


@dataclass
class _Split:
    """A pytree split into its array leaves (abstract) and everything else (kept)."""

    treedef: Any
    is_array: list[bool]
    arrays: list[Any]  # abstract arrays, None in place of the other leaves
    others: list[Any]  # the other leaves, None in place of arrays
    paths: list[str]

    @classmethod
    def of(cls, tree: Any) -> _Split:
        with_path, treedef = jax.tree_util.tree_flatten_with_path(tree)
        paths = [keystr(p) for p, _ in with_path]
        leaves = [leaf for _, leaf in with_path]
        is_array = [isinstance(leaf, _ARRAYS) for leaf in leaves]
        return cls(
            treedef,
            is_array,
            [_abstract(x) if a else None for x, a in zip(leaves, is_array)],
            [None if a else x for x, a in zip(leaves, is_array)],
            paths,
        )

    def combine(self, arrays: list[Any], keep_others: bool = True) -> Any:
        """The tree again, with ``arrays`` (e.g. tracers) and the other leaves, or
        ``None`` in their place (``keep_others=False``, like ``eqx.filter``)."""
        leaves = [
            a if is_arr else (o if keep_others else None)
            for a, o, is_arr in zip(arrays, self.others, self.is_array)
        ]
        return jax.tree_util.tree_unflatten(self.treedef, leaves)

    @property
    def non_arrays(self) -> list[tuple[str, Any]]:
        return [(p, o) for p, o, a in zip(self.paths, self.others, self.is_array) if not a]

    @property
    def non_values(self) -> list[tuple[str, Any]]:
        """The non-array leaves that are not Python numbers either (functions, strings,
        objects): the ones that no JAX transformation can take as a value."""
        return [(p, o) for p, o in self.non_arrays if not isinstance(o, _PYTHON_NUMBERS)]


def _describe(leaf: Any) -> str:
    name = getattr(leaf, "__qualname__", None) or getattr(leaf, "__name__", None)
    return (
        f"{type(leaf).__name__} {name}"
        if name
        else f"{type(leaf).__name__} {trace.shorten(repr(leaf), 40)}"
    )


def _fast_part(params: Any) -> Any | None:
    """The ``fast`` params of an ``optax.LookaheadParams`` (what grads are taken of)."""
    if type(params).__name__ == "LookaheadParams" and hasattr(params, "fast"):
        return params.fast
    return None


def _grads_mismatch(grads: Any, params: Any) -> str | None:
    """None if ``grads`` fits ``params``, else where it does not.

    Grads fit when their structure, with ``None`` allowed in place of any subtree (what
    ``eqx.filter_grad`` gives for leaves it does not differentiate), is a prefix of the
    params' structure and every array in the grads sits on a leaf of the params.
    """

    def leaf(path: Any, g: Any, p: Any) -> None:
        if g is not None and isinstance(g, _ARRAYS) and jax.tree.structure(p).num_nodes != 1:  # type: ignore[attr-defined]
            raise ValueError(f"grads{keystr(path)} is an array where params have a subtree")

    try:
        jax.tree_util.tree_map_with_path(leaf, grads, params, is_leaf=lambda x: x is None)
    except (ValueError, TypeError) as error:
        return (
            str(error).splitlines()[0]
            if "grads" in str(error)
            else (trace.treedef_diff(params, grads) or first_line(error))
        )
    return None


def default_grads(params: Any, dtype: Any = None) -> Any:
    """The grads the check assumes when none are given.

    Args:
        params: the params (an ``optax.LookaheadParams`` gives the grads of its ``fast``).
        dtype: the dtype of the grads; each leaf's own dtype when None.

    Returns:
        ``ShapeDtypeStruct`` zeros like the floating-point array leaves, and ``None`` at
        every other leaf: what ``eqx.filter_grad`` gives for int, bool and key leaves.

    Examples:
        >>> import jax.numpy as jnp
        >>> default_grads({"w": jnp.ones(2), "step": jnp.zeros((), jnp.int32)})
        {'step': None, 'w': ShapeDtypeStruct(shape=(2,), dtype=float32)}
    """
    fast = _fast_part(params)
    return jax.tree.map(
        lambda x: _abstract(x, dtype) if _is_inexact(x) else None, params if fast is None else fast
    )


def _grads_none_mask(grads: Any, init_params: Any) -> list[bool] | None:
    """For each leaf of ``init_params``: whether the grads have ``None`` there (None
    when the grads do not line up with ``init_params``)."""
    try:
        marks = jax.tree.map(
            lambda g, sub: jax.tree.map(lambda _: g is None, sub),
            grads,
            init_params,
            is_leaf=lambda x: x is None,
        )
    except (ValueError, TypeError):
        return None
    flags = jax.tree.leaves(marks)
    return flags if len(flags) == len(jax.tree.leaves(init_params)) else None


# --------------------------------------------------------------------------- input


def _validate(optimizer: Any, steps: Any, update_kwargs: Any, update_params: Any) -> None:
    """Clear errors for the inputs that would otherwise fail deep inside the check."""
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
    if steps is not None and (isinstance(steps, bool) or not isinstance(steps, (int, np.integer))):
        raise TypeError(
            f"steps must be an int (or None: step until the state's types settle), "
            f"got {type(steps).__name__} {steps!r}"
        )
    if steps is not None and steps < 1:
        raise ValueError(f"steps must be at least 1, got {steps}")
    if update_kwargs is not None and not isinstance(update_kwargs, Mapping):
        raise TypeError(
            "update_kwargs must be a mapping of keyword arguments for update, e.g. "
            f"dict(value=loss), got {type(update_kwargs).__name__} {update_kwargs!r}"
        )
    if update_params not in (True, False, "both"):
        raise ValueError(f'update_params must be True, False or "both", got {update_params!r}')


def _input_notes(p: _Split, params: Any, grads_given: bool, grads_dtype: Any) -> list[Finding]:
    """Notes on what the check assumed: non-array leaves, and low-precision default grads."""
    notes = [
        Finding("non-array leaf", "note", f"params{path}", f"{_describe(leaf)} (not an array)")
        for path, leaf in p.non_values
    ]
    numbers = len(p.non_arrays) - len(p.non_values)
    if numbers:
        notes.append(
            Finding(
                "non-array leaf",
                "note",
                "params",
                f"{numbers} Python number leaf(s) (bool, int or float, not arrays; "
                "eqx.filter_jit keeps them static, jax.jit would trace them as "
                "weakly typed scalars)",
            )
        )
    low = sorted(
        {
            str(x.dtype)
            for x in jax.tree.leaves(params)
            if _is_inexact(x) and jnp.dtype(x.dtype) in _LOW_PRECISION
        }
    )
    if low and not grads_given and grads_dtype is None:
        notes.append(
            Finding(
                "state drift",
                "note",
                "grads",
                f"checked with {'/'.join(low)} grads, like the params; if your grads "
                "are float32 (mixed precision), pass grads or grads_dtype=jnp.float32",
            )
        )
    return notes


# --------------------------------------------------------------------------- stepping


def _non_array_finding(split: _Split, label: str, phase: str, error: BaseException) -> Finding:
    """The leaves to blame: those that are not JAX values, if any (a Python number next to
    them is traced as a scalar and is not the problem), else every non-array leaf."""
    culprits = split.non_values or split.non_arrays
    leaves = "; ".join(f"params{p} = {_describe(v)}" for p, v in culprits)
    return Finding(
        "non-array leaf",
        "error",
        leaves,
        f"{phase} touches them: {first_line(error)}",
        f"give optax only the arrays ({label})",
    )


def _drift_finding(d: trace.Drift, step: int, call: str) -> Finding:
    severity: Severity = "note" if d.kind == "weak_type" else "error"
    return Finding(
        "state drift",
        severity,
        f"state{d.path}",
        f"step {step}{call}: {d.kind} {d.before} -> {d.after}",
        _WHY[d.kind],
    )


def _serious(drifts: trace.DriftReport) -> list[trace.Drift]:
    """The drifts worth reporting: a weak-type change is kept (as a note) only where the
    dtype did not change too, since the dtype line already says it."""
    retyped = {d.path for d in drifts if d.kind == "dtype"}
    return [d for d in drifts if not (d.kind == "weak_type" and d.path in retyped)]


@dataclass
class _Run:
    """Everything one way of calling ``update`` needs, and what it found."""

    optimizer: Any
    params: _Split
    grads: Any
    kwargs: dict[str, Any]
    with_params: bool
    report: CheckReport
    keep: bool = True  # whether update sees the non-array leaves (False once optax broke on them)
    optional: bool = False  # this way of calling update is checked on top of the user's own
    failed: tuple[int, BaseException] | None = None  # (step, error) of a failure left to explain

    @property
    def call(self) -> str:
        return "" if self.with_params else ", update(grads, state) without params"

    def update(self, state: Any) -> Any:
        """The state after one abstract step (raises what ``update`` raises)."""
        p, keep, opt, kwargs = self.params, self.keep, self.optimizer, self.kwargs
        if self.with_params:
            step = lambda g, s, arrays: opt.update(g, s, p.combine(arrays, keep), **kwargs)
        else:
            step = lambda g, s, arrays: opt.update(g, s, **kwargs)
        return jax.eval_shape(step, self.grads, state, p.arrays)[1]

    def crash(self, k: int, error: BaseException, suffix: str = "", why: str = "") -> None:
        if self.optional:  # many transformations need params; not a bug of the set-up
            self.report.append(
                Finding(
                    "crash",
                    "note",
                    f"update without params, step {k}",
                    first_line(error),
                    "pass params to update",
                )
            )
        else:
            where = f"update{'' if self.with_params else ' without params'}, step {k}{suffix}"
            self.report.append(Finding("crash", "error", where, first_line(error), why))

    def step(self, k: int, state: Any) -> Any | None:
        """One step, its failures turned into findings; None when it cannot go on.
        Raises what ``update`` raises when it is none of the check's own cases."""
        with trace.record_cond_branches() as calls:
            try:
                current = self.update(state)
            except Exception as error:
                branches = recorded_findings(calls) or error_findings(error)
                if branches:
                    self.report.extend(f for f in branches if f not in self.report)
                    self.crash(k, error, why="caused by the branch type mismatch above")
                    return None
                if not (self.keep and self.with_params and self.params.non_arrays):
                    raise
                self.report.append(
                    _non_array_finding(
                        self.params,
                        "e.g. update(grads, state, eqx.filter(model, eqx.is_array))",
                        "update",
                        error,
                    )
                )
                self.keep = False
                try:
                    current = self.update(state)
                except Exception as second:
                    self.crash(k, second, " (non-array leaves as None)")
                    return None
        self.report.extend(f for f in recorded_findings(calls) if f not in self.report)
        return current

    def run(self, state: Any, steps: int | None) -> int:
        """Step from ``state``: ``steps`` times, or until the types settle (``None``).

        Reports each drift from the initial state at the first step it shows.  A failure
        that is none of the check's own cases is kept in ``failed`` as (step, error) for
        the caller to explain.  Returns the number of steps traced.
        """
        previous, seen, k = state, set(), 0
        limit = MAX_STEPS if steps is None else steps
        while k < limit:
            k += 1
            try:
                current = self.step(k, previous)
            except Exception as error:
                self.failed = (k, error)
                return k
            if current is None:
                return k
            drifts = _serious(trace.type_diff(state, current))
            for d in drifts:
                if (d.path, d.kind) not in seen:
                    seen.add((d.path, d.kind))
                    self.report.append(_drift_finding(d, k, self.call))
            if any(d.kind == "structure" for d in drifts):
                return k
            if steps is None and not trace.type_diff(previous, current):
                return k  # a fixed point: the next step sees the same types
            previous = current
        if steps is None:
            self.report.append(
                Finding(
                    "state drift",
                    "warning",
                    "state",
                    f"the state's types still change after {k} steps",
                )
            )
        return k


# --------------------------------------------------------------------------- the check


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
) -> CheckReport:
    """Trace ``optimizer.init`` and ``update`` steps abstractly; report the book's bugs.

    Args:
        optimizer: an optax ``GradientTransformation`` (an instance, not a class).
        params: what your code passes to ``update``; may be a whole model (an Equinox
            module with functions in it, say): the check tells you whether optax touches
            its non-array leaves.
        grads: what your code passes as the updates.  Defaults to zeros like the
            floating-point array leaves of ``params`` (of ``params.fast`` for
            ``optax.LookaheadParams``) and ``None`` at every other leaf, as
            ``eqx.filter_grad`` gives.  ``None`` may stand in for any subtree.
        steps: how many ``update`` steps to trace; ``None`` (the default) steps until
            the state's types stop changing (at most ``MAX_STEPS``).
        update_kwargs: passed to every ``update`` call (``value=``, ``grad=``,
            ``value_fn=`` for ``optax.lbfgs``).
        init_params: what your code passes to ``init`` when that differs from
            ``params`` (the equinox FAQ's ``eqx.filter(model, eqx.is_inexact_array)``).
        strict: raise :class:`OptimizerCheckError` instead of returning a report with
            errors.
        update_params: how your code calls ``update``: ``True`` with params,
            ``False`` as ``update(grads, state)``, ``"both"`` to check both ways (a
            failure without params is then only a note, since many transformations
            need them).
        grads_dtype: the dtype of the default grads (e.g. ``jnp.float32`` for bf16
            params with f32 grads); defaults to each leaf's own dtype.

    Returns:
        The findings, as a :class:`CheckReport`.  The check runs under the current JAX
        configuration, so enable x64 first if your program does.

    Raises:
        TypeError: ``optimizer`` is not a ``GradientTransformation`` (or is a class),
            ``steps`` is not an int, or ``update_kwargs`` is not a mapping.
        ValueError: ``grads`` or ``init_params`` do not fit ``params``, ``params``
            have no floating-point leaf to default the grads from, ``steps`` < 1 or
            ``update_params`` is not one of its values.
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
          ERROR   state drift: state[0].mu['w']: step 1: dtype bf16[3] -> f32[3] (...)
        >>> report.ok, report.families(), report.errors[0].where
        (False, {'state drift'}, "state[0].mu['w']")

        In a test, ``strict=True`` raises instead:

        >>> check_optimizer(optax.monitor({"n": optax.tree.norm}), jnp.ones(4), strict=True)
        Traceback (most recent call last):
            ...
        casebook.check._report.OptimizerCheckError: check_optimizer: init and 1 update step(s) traced; 1 error(s), 0 warning(s)
          ERROR   state drift: state.measurements: step 1: structure {} -> {'n': *} (...)
    """
    _validate(optimizer, steps, update_kwargs, update_params)
    p = _Split.of(params)
    target = _fast_part(params)
    if grads is None:
        grads_abs = default_grads(params, grads_dtype)
        if not jax.tree.leaves(grads_abs):
            raise ValueError(
                "check_optimizer: params have no floating-point array leaf, so there "
                "are no grads to default to; pass grads= as your code computes them"
            )
    else:
        mismatch = _grads_mismatch(grads, params)
        if mismatch is not None and target is not None:
            mismatch = _grads_mismatch(grads, target)
        if mismatch is not None:
            raise ValueError(
                "check_optimizer: grads do not match params (None may stand for "
                f"any subtree): {mismatch}"
            )
        g = _Split.of(grads)
        grads_abs = g.combine(g.arrays, keep_others=True)
    if init_params is None:
        q = p
    else:
        q = _Split.of(init_params)
        if _grads_mismatch(init_params, params) is not None and q.treedef != p.treedef:
            raise ValueError(
                "check_optimizer: init_params do not match params (None may stand "
                f"for any subtree): {trace.treedef_diff(params, init_params)}"
            )
    report = CheckReport(steps=0)
    report.extend(callable_findings(optimizer))
    report.extend(_input_notes(p, params, grads is not None, grads_dtype))
    state = _init(optimizer, q, report)
    if state is None:
        return _finish(report, strict)
    kwargs = dict(update_kwargs or {})
    for with_params in (True, False) if update_params == "both" else (bool(update_params),):
        run = _Run(
            optimizer,
            p,
            grads_abs,
            kwargs,
            with_params,
            report,
            optional=update_params == "both" and not with_params,
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


def _init(optimizer: Any, q: _Split, report: CheckReport) -> Any | None:
    """The abstract state of ``optimizer.init``, its failures turned into findings."""
    try:
        return jax.eval_shape(lambda arrays: optimizer.init(q.combine(arrays, True)), q.arrays)
    except Exception as error:
        if not q.non_arrays:
            report.append(Finding("crash", "error", "init", first_line(error)))
            return None
        try:
            state = jax.eval_shape(
                lambda arrays: optimizer.init(q.combine(arrays, False)), q.arrays
            )
        except Exception as second:
            report.append(Finding("crash", "error", "init", first_line(error)))
            report.append(
                Finding("crash", "error", "init (non-array leaves as None)", first_line(second))
            )
            return None
        report.append(
            _non_array_finding(
                q, "e.g. init(eqx.filter(model, eqx.is_inexact_array))", "init", error
            )
        )
        return state


def _blame_init(
    optimizer: Any,
    q: _Split,
    grads: Any,
    init_params: Any,
    error: BaseException,
    run: _Run,
    steps: int | None,
    report: CheckReport,
) -> bool:
    """When ``update`` fails because ``init`` built state for leaves that get no grads
    (an int position, a bool buffer, a PRNG key, a frozen layer), say so and go on from
    an ``init`` of the leaves that do get grads.  Returns whether it was that."""
    none_at = _grads_none_mask(grads, init_params)
    if none_at is None:
        return False
    drop = [a and n for a, n in zip(q.is_array, none_at)]
    if not any(drop):
        return False
    trimmed = [None if d else a for a, d in zip(q.arrays, drop)]
    try:
        state = jax.eval_shape(lambda arrays: optimizer.init(q.combine(arrays, True)), trimmed)
        run.update(state)
    except Exception:
        return False
    leaves = "; ".join(
        f"params{path} = {trace.type_str(a)}" for path, a, d in zip(q.paths, q.arrays, drop) if d
    )
    report.append(
        Finding(
            "non-array leaf",
            "error",
            leaves,
            f"init built optimizer state for leaves that get no grads (None), and update fails on "
            f"it: {first_line(error)}",
            "init only what gets grads, e.g. init(eqx.filter(model, eqx.is_inexact_array))",
        )
    )
    report.steps = max(report.steps, run.run(state, steps))
    if run.failed is not None:
        run.crash(run.failed[0], run.failed[1])
    return True


def _finish(report: CheckReport, strict: bool) -> CheckReport:
    """Drop the notes about non-array leaves that an error already names, point a crash
    to the callable hyperparameter that explains it; maybe raise."""
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

"""Does my optimizer set-up have one of the casebook's bugs?  Find out before it crashes.

:func:`check_optimizer` takes an optax ``GradientTransformation``, the params (and
optionally the grads and the extra keyword arguments of ``update``), and traces
``init`` and a few ``update`` steps with ``jax.eval_shape``: no compile, no FLOPs.  It
looks for the three families of bugs in the book:

1. **State drift** (cases 1 and 4): a state leaf whose dtype, weak type, shape or tree
   structure changes across a step, and the two branches of a ``lax.cond`` inside
   ``update`` that disagree on a type.  Such a state breaks ``lax.scan``, ``lax.cond``,
   checkpoint round trips, or costs a retrace.
2. **Non-array leaves that optax touches** (cases 3 and 5): functions, strings or other
   objects in params or grads that ``init`` or ``update`` tries to trace or to do
   arithmetic on.  Non-array leaves that optax never reads are listed as a note only.
3. **Callable data taken for a schedule** (case 2): a hyperparameter of
   ``inject_hyperparams`` that will be called with the step count although it is data
   (a callable pytree such as an Equinox module), or a mask function that returns one
   value for the whole tree when called with the step count.

The result is a :class:`CheckReport`: a list of :class:`Finding`, readable as text and
as an HTML table, with :meth:`CheckReport.raise_if_problems`.  Failures inside the
user's code become findings with the exception's type and first line, not tracebacks.
"""

from __future__ import annotations

import html
import inspect
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import jax
import jax.numpy as jnp
import numpy as np
from jax.tree_util import keystr

from casebook import trace

__all__ = ["CheckReport", "Finding", "OptimizerCheckError", "check_optimizer"]

Family = Literal["state drift", "non-array leaf", "callable hyperparameter", "crash"]
Severity = Literal["error", "warning", "note"]

_ARRAYS = (jax.Array, jax.ShapeDtypeStruct, np.ndarray, np.generic)
_PYTHON_NUMBERS = (bool, int, float, complex)
_MASK_NAMES = frozenset({"mask"})  # hyperparameters that take a function of params
_WHY = {
    "dtype": "lax.scan, lax.cond and checkpoint restores need identical dtypes",
    "shape": "lax.scan and lax.cond need identical shapes",
    "structure": "the state cannot be fed back as the same tree",
    "weak_type": "harmless for lax.scan/cond; a jitted step traces once more",
}


class OptimizerCheckError(ValueError):
    """Raised by :meth:`CheckReport.raise_if_problems` (and ``strict=True``)."""


@dataclass(frozen=True)
class Finding:
    """One problem (or note): its family, severity, where it is, what and why."""

    family: Family
    severity: Severity
    where: str
    what: str
    why: str = ""

    def __str__(self) -> str:
        why = f" ({self.why})" if self.why else ""
        return f"{self.severity.upper():7} {self.family}: {self.where}: {self.what}{why}"


class CheckReport(list[Finding]):
    """The findings of :func:`check_optimizer`, in the order they were found."""

    def __init__(self, findings: Any = (), steps: int = 0) -> None:
        super().__init__(findings)
        self.steps = steps

    @property
    def problems(self) -> list[Finding]:
        """Errors and warnings (not notes)."""
        return [f for f in self if f.severity != "note"]

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self if f.severity == "error"]

    @property
    def ok(self) -> bool:
        """True when no finding is an error or a warning."""
        return not self.problems

    def families(self) -> set[str]:
        """The families of the errors and warnings."""
        return {f.family for f in self.problems}

    def __str__(self) -> str:
        head = (f"check_optimizer: init and {self.steps} update step(s) traced; "
                f"{len(self.errors)} error(s), {len(self.problems) - len(self.errors)} warning(s)")
        if not self:
            return head + "; nothing found"
        return "\n".join([head] + [f"  {f}" for f in self])

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))

    def _repr_html_(self) -> str:
        head = html.escape(str(self).splitlines()[0])
        rows = "".join(
            "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in
                             (f.severity, f.family, f.where, f.what, f.why)) + "</tr>"
            for f in self)
        if not rows:
            return f"<p>{head}</p>"
        return (f"<p>{head}</p><table><thead><tr><th>severity</th><th>family</th>"
                f"<th>where</th><th>what</th><th>why</th></tr></thead><tbody>{rows}</tbody></table>")

    def raise_if_problems(self, *, warnings: bool = False) -> CheckReport:
        """Raise :class:`OptimizerCheckError` listing the errors (and the warnings, with
        ``warnings=True``); return the report unchanged otherwise."""
        bad = self.problems if warnings else self.errors
        if bad:
            raise OptimizerCheckError("\n".join([str(self).splitlines()[0]] + [f"  {f}" for f in bad]))
        return self


# --------------------------------------------------------------------------- helpers


def _first_line(error: BaseException, width: int = 160) -> str:
    text = (str(error).strip() or repr(error)).splitlines()
    line = text[0] if text else ""
    line = line if len(line) <= width else line[: width - 3] + "..."
    return f"{type(error).__name__}: {line}"


def _abstract(x: Any) -> Any:
    """A ``ShapeDtypeStruct`` for an array leaf (keeping its weak type)."""
    if isinstance(x, jax.ShapeDtypeStruct):
        return x
    x = jnp.asarray(x) if not isinstance(x, jax.Array) else x
    return jax.ShapeDtypeStruct(x.shape, x.dtype, weak_type=bool(getattr(x, "weak_type", False)))


@dataclass
class _Split:
    """A pytree split into its array leaves (abstract) and everything else (kept)."""

    treedef: Any
    is_array: list[bool]
    arrays: list[Any]   # abstract arrays, None in place of the other leaves
    others: list[Any]   # the other leaves, None in place of arrays
    paths: list[str]

    @classmethod
    def of(cls, tree: Any) -> _Split:
        with_path, treedef = jax.tree_util.tree_flatten_with_path(tree)
        paths = [keystr(p) for p, _ in with_path]
        leaves = [leaf for _, leaf in with_path]
        is_array = [isinstance(leaf, _ARRAYS) for leaf in leaves]
        return cls(treedef, is_array,
                   [_abstract(x) if a else None for x, a in zip(leaves, is_array)],
                   [None if a else x for x, a in zip(leaves, is_array)], paths)

    def combine(self, arrays: list[Any], keep_others: bool = True) -> Any:
        """The tree again, with ``arrays`` (e.g. tracers) and the other leaves, or
        ``None`` in their place (``keep_others=False``, like ``eqx.filter``)."""
        leaves = [a if is_arr else (o if keep_others else None)
                  for a, o, is_arr in zip(arrays, self.others, self.is_array)]
        return jax.tree_util.tree_unflatten(self.treedef, leaves)

    @property
    def non_arrays(self) -> list[tuple[str, Any]]:
        return [(p, o) for p, o, a in zip(self.paths, self.others, self.is_array) if not a]

    @property
    def non_values(self) -> list[tuple[str, Any]]:
        """The non-array leaves that are not JAX values either (functions, strings,
        objects): Python numbers would be traced as weakly typed scalars."""
        return [(p, o) for p, o in self.non_arrays if not isinstance(o, _PYTHON_NUMBERS)]


def _describe(leaf: Any) -> str:
    name = getattr(leaf, "__qualname__", None) or getattr(leaf, "__name__", None)
    return f"{type(leaf).__name__} {name}" if name else f"{type(leaf).__name__} {trace._shorten(repr(leaf), 40)}"


def _closure_items(fn: Any) -> Iterator[tuple[str, Any]]:
    """(name, value) of the closure cells of a function (and of functools.partial)."""
    func = getattr(fn, "func", fn)  # functools.partial
    code, cells = getattr(func, "__code__", None), getattr(func, "__closure__", None)
    if code is None or not cells:
        return
    for name, cell in zip(code.co_freevars, cells):
        try:
            yield name, cell.cell_contents
        except ValueError:  # an empty cell
            continue


def _walk_transforms(opt: Any, where: str = "optimizer",
                     seen: set[int] | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every (where, closure dict) of the init/update functions reachable from ``opt``:
    through closures, tuples and dicts of functions, and nested transformations."""
    seen = set() if seen is None else seen
    if id(opt) in seen:
        return
    seen.add(id(opt))
    for attr in ("init", "update"):
        fn = getattr(opt, attr, None)
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        cells = dict(_closure_items(fn))
        if cells:
            yield f"{where}.{attr}", cells
        for name, value in cells.items():
            for child in (value if isinstance(value, (tuple, list)) else [value]):
                if hasattr(child, "init") and hasattr(child, "update"):
                    yield from _walk_transforms(child, f"{where}.{attr}<{name}>", seen)
                elif callable(child) and hasattr(child, "__code__") and id(child) not in seen:
                    seen.add(id(child))
                    inner = dict(_closure_items(child))
                    if inner:
                        yield f"{where}.{attr}<{name}>", inner


def _is_callable_data(value: Any) -> bool:
    """A callable pytree that has leaves and at least one of them is not callable
    (an Equinox module holding arrays or bools): data that happens to be callable."""
    if not callable(value) or inspect.isfunction(value) or inspect.ismethod(value):
        return False
    leaves = jax.tree.leaves(value)
    return bool(leaves) and not all(callable(leaf) for leaf in leaves)


def _hyperparameter_findings(optimizer: Any, params: Any) -> list[Finding]:
    """Family 3: what ``inject_hyperparams`` will call with the step count."""
    findings = []
    count = jax.ShapeDtypeStruct((), jnp.int32)
    reported: set[int] = set()
    for where, cells in _walk_transforms(optimizer):
        schedules = cells.get("sched_hps")
        if not isinstance(schedules, Mapping):
            continue
        for name, wrapped in schedules.items():
            fn = getattr(wrapped, "schedule_fn", wrapped)
            if id(fn) in reported:
                continue
            reported.add(id(fn))
            label = f"inject_hyperparams({name}=...)"
            if _is_callable_data(fn):
                findings.append(Finding(
                    "callable hyperparameter", "error", label,
                    f"{type(fn).__name__} is a callable pytree with data leaves, and "
                    "inject_hyperparams will call it as a schedule with the step count",
                    f'pass static_args="{name}" (optax>=0.2.4) so it is used as data'))
            elif name in _MASK_NAMES and callable(fn):
                try:
                    out = jax.eval_shape(fn, count)
                    got = trace._shorten(str(trace.types(out)), 60)
                except Exception as error:  # the mask fails on a step count
                    got = _first_line(error, 80)
                findings.append(Finding(
                    "callable hyperparameter", "error", label,
                    f"this mask function will be called with the step count, not with params, "
                    f"and returns {got} there",
                    f'pass static_args="{name}" so it is called with params'))
    return findings


def _fn_name(recorded: str) -> str:
    """A branch's short name from the name recorded by ``trace.record_cond_branches``
    (which is a ``repr`` for a ``functools.partial``)."""
    found = re.search(r"<function ([^ ]+) at ", recorded)
    return found.group(1).split(".")[-1] if found else recorded


def _serious(drifts: trace.DriftReport) -> list[trace.Drift]:
    """The drifts worth reporting: a weak-type change is kept (as a note) only where the
    dtype did not change too, since the dtype line already says it."""
    retyped = {d.path for d in drifts if d.kind == "dtype"}
    return [d for d in drifts if not (d.kind == "weak_type" and d.path in retyped)]


def _drift_finding(d: trace.Drift, step: int) -> Finding:
    severity: Severity = "note" if d.kind == "weak_type" else "error"
    return Finding("state drift", severity, f"state{d.path}",
                   f"step {step}: {d.kind} {d.before} -> {d.after}", _WHY[d.kind])


def _cond_findings(calls: trace.CondCalls) -> list[Finding]:
    """Branch outputs of a ``lax.cond`` that differ in dtype, shape or structure (the
    weak type may differ: ``cond`` promotes it)."""
    findings = []
    for call in calls:
        true_name, false_name = _fn_name(call.true_name), _fn_name(call.false_name)
        for d in call.diff or ():
            if d.kind == "weak_type":
                continue
            findings.append(Finding(
                "state drift", "error", f"lax.cond({true_name}, {false_name}) output{d.path}",
                f"{d.kind}: {d.before} in {true_name}, {d.after} in {false_name}",
                "lax.cond needs identical branch output types"))
    return findings


def _non_array_finding(split: _Split, label: str, phase: str, error: BaseException) -> Finding:
    """The leaves to blame: those that are not JAX values, if any (a Python number next to
    them is traced as a scalar and is not the problem), else every non-array leaf."""
    culprits = split.non_values or split.non_arrays
    leaves = "; ".join(f"params{p} = {_describe(v)}" for p, v in culprits)
    return Finding("non-array leaf", "error", leaves, f"{phase} touches them: {_first_line(error)}",
                   f"give optax only the arrays ({label})")


# --------------------------------------------------------------------------- the check


def check_optimizer(
    optimizer: Any,
    params: Any,
    grads: Any = None,
    *,
    steps: int = 2,
    update_kwargs: Mapping[str, Any] | None = None,
    init_params: Any = None,
    strict: bool = False,
) -> CheckReport:
    """Trace ``optimizer.init(params)`` and ``steps`` updates abstractly; report bugs.

    ``params`` may be a whole model (an Equinox module with functions in it, say):
    the check tells you whether optax touches its non-array leaves.  ``grads``
    defaults to zeros shaped like the array leaves of ``params`` (``None`` elsewhere,
    as ``eqx.filter_grad`` gives); if given, it must have the structure of ``params``
    or of ``params`` with the non-array leaves replaced by ``None``.
    ``update_kwargs`` are passed to every ``update`` call (``value=``, ``grad=``,
    ``value_fn=`` for ``optax.lbfgs``).  ``init_params`` is what your code passes to
    ``init`` when that differs from what it passes to ``update`` (the equinox FAQ's
    ``eqx.filter(model, eqx.is_inexact_array)``, say); it defaults to ``params``.
    The check runs under the current JAX
    configuration: enable x64 first if your program does.

    Returns a :class:`CheckReport`; with ``strict=True`` raises
    :class:`OptimizerCheckError` instead when there is an error.  Raises ``TypeError``
    when ``optimizer`` is not a ``GradientTransformation`` and ``ValueError`` when
    ``grads`` does not match ``params``.
    """
    if not (callable(getattr(optimizer, "init", None)) and callable(getattr(optimizer, "update", None))):
        raise TypeError(f"check_optimizer needs an optax GradientTransformation (with init and "
                        f"update), got {type(optimizer).__name__}: {trace._shorten(repr(optimizer), 60)}")
    if steps < 1:
        raise ValueError(f"steps must be at least 1, got {steps}")
    kwargs = dict(update_kwargs or {})
    p = _Split.of(params)
    filtered = p.combine(p.arrays, keep_others=False)
    if grads is None:
        grads_abs = jax.tree.map(_abstract, filtered)
    else:
        g = _Split.of(grads)
        grads_abs = g.combine(g.arrays, keep_others=True)
        if (jax.tree.structure(grads_abs) != jax.tree.structure(params)
                and jax.tree.structure(grads_abs) != jax.tree.structure(filtered)):
            diff = trace.treedef_diff(filtered, grads_abs)
            raise ValueError("check_optimizer: grads do not match params (nor params with the "
                             f"non-array leaves replaced by None): {diff}")
    report = CheckReport(steps=steps)
    report.extend(_hyperparameter_findings(optimizer, params))
    for path, leaf in p.non_values:
        report.append(Finding("non-array leaf", "note", f"params{path}",
                              f"{_describe(leaf)} (not an array)"))
    numbers = len(p.non_arrays) - len(p.non_values)
    if numbers:
        report.append(Finding("non-array leaf", "note", "params",
                              f"{numbers} Python number leaf(s) (traced as weakly typed scalars)"))
    keep = True  # whether update sees the non-array leaves (False once optax broke on them)
    if init_params is None:
        q = p
    else:
        q = _Split.of(init_params)
        if q.treedef != p.treedef and jax.tree.structure(init_params) != jax.tree.structure(filtered):
            raise ValueError("check_optimizer: init_params do not match params (nor params with "
                             f"the non-array leaves replaced by None): "
                             f"{trace.treedef_diff(filtered, init_params)}")

    def init(keep_others: bool) -> Callable[[list[Any]], Any]:
        return lambda arrays: optimizer.init(q.combine(arrays, keep_others))

    try:
        state = jax.eval_shape(init(True), q.arrays)
    except Exception as error:
        if not q.non_arrays:
            report.append(Finding("crash", "error", "init", _first_line(error)))
            return _finish(report, strict)
        try:
            state = jax.eval_shape(init(False), q.arrays)
        except Exception as second:
            report.append(Finding("crash", "error", "init", _first_line(error)))
            report.append(Finding("crash", "error", "init (non-array leaves as None)",
                                  _first_line(second)))
            return _finish(report, strict)
        report.append(_non_array_finding(
            q, "e.g. init(eqx.filter(model, eqx.is_inexact_array))", "init", error))

    def traced_update(keep_others: bool) -> Any:
        def step(g: Any, s: Any, arrays: list[Any]) -> Any:
            return optimizer.update(g, s, p.combine(arrays, keep_others), **kwargs)
        return step

    current, seen = state, set()
    for k in range(1, steps + 1):
        with trace.record_cond_branches() as calls:
            try:
                _, current = jax.eval_shape(traced_update(keep), grads_abs, current, p.arrays)
            except Exception as error:
                conds = _cond_findings(calls)
                if conds:
                    report.extend(conds)
                    report.append(Finding("crash", "error", f"update, step {k}", _first_line(error),
                                          "caused by the lax.cond type mismatch above"))
                    return _finish(report, strict)
                if not (keep and p.non_arrays):
                    report.append(Finding("crash", "error", f"update, step {k}", _first_line(error)))
                    return _finish(report, strict)
                report.append(_non_array_finding(
                    p, "e.g. update(grads, state, eqx.filter(model, eqx.is_array))", "update", error))
                keep = False
                try:
                    _, current = jax.eval_shape(traced_update(False), grads_abs, current, p.arrays)
                except Exception as second:
                    report.append(Finding("crash", "error",
                                          f"update, step {k} (non-array leaves as None)",
                                          _first_line(second)))
                    return _finish(report, strict)
        report.extend(f for f in _cond_findings(calls) if f not in report)
        drifts = _serious(trace.type_diff(state, current))
        for d in drifts:
            if (d.path, d.kind) not in seen:  # report each drift at the first step it shows
                seen.add((d.path, d.kind))
                report.append(_drift_finding(d, k))
        if any(d.kind == "structure" for d in drifts):
            break
    return _finish(report, strict)


def _finish(report: CheckReport, strict: bool) -> CheckReport:
    """Drop the notes about non-array leaves that an error already names; maybe raise."""
    named = " ".join(f.where for f in report.errors if f.family == "non-array leaf")
    report[:] = [f for f in report if not (f.severity == "note" and f"{f.where} =" in named)]
    return report.raise_if_problems() if strict else report

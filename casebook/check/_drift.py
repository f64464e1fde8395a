"""The ``drift`` family of the check: a state whose types change across ``update`` steps.

A state leaf whose dtype, shape or weak type changes, or a state whose tree structure
changes, cannot be carried through ``lax.scan`` or ``lax.cond`` or restored from a
checkpoint as it is, or costs a jitted step one more trace (cases 1 and 4).  Each state
after a step is compared with the initial state, so a drift is reported once, at the
first step that shows it, even when a later step changes the type back or further; the
stepping itself is :class:`casebook.check._run.Run`.  The branches of a ``lax.cond``
that disagree on a type, the other half of the family, are
:mod:`casebook.check._branches`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from casebook import trace
from casebook.check._report import CheckReport, Finding, Severity

_WHY = {
    "dtype": "lax.scan, lax.cond and checkpoint restores need identical dtypes",
    "shape": "lax.scan and lax.cond need identical shapes",
    "structure": "the state cannot be fed back as the same tree",
    "weak_type": "harmless for lax.scan/cond; a jitted step traces once more",
}


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
class DriftWatch:
    """The drifts from ``initial`` over the steps of one way of calling ``update``.

    ``call`` says which way (empty for ``update(grads, state, params)``); each drift
    (path and kind) goes to ``report`` once.
    """

    initial: Any
    call: str
    report: CheckReport
    seen: set[tuple[str, str]] = field(default_factory=set)

    def see(self, step: int, current: Any) -> bool:
        """Report the drifts from the initial state that ``current``, the state after
        ``step``, shows first; return whether its tree structure changed (so that no
        further step can take it)."""
        drifts = _serious(trace.type_diff(self.initial, current))
        for d in drifts:
            if (d.path, d.kind) not in self.seen:
                self.seen.add((d.path, d.kind))
                self.report.append(_drift_finding(d, step, self.call))
        return any(d.kind == "structure" for d in drifts)


def settled(previous: Any, current: Any) -> bool:
    """Whether a step kept the state's types: a fixed point, the next step sees the same."""
    return not trace.type_diff(previous, current)


def unsettled_finding(steps: int) -> Finding:
    """The warning for a state whose types still change after ``steps`` steps."""
    return Finding(
        "state drift",
        "warning",
        "state",
        f"the state's types still change after {steps} steps",
    )

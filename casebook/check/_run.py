"""Abstract ``init`` and ``update`` steps for :mod:`casebook.check`, failures as findings.

Every step is traced with ``jax.eval_shape``: no compile, no FLOPs.  :func:`init_state`
gives the initial state; a :class:`Run` steps one way of calling ``update`` (with or
without params) until the state's types settle, and hands each step's state to the
families that read it: state drift (:mod:`casebook.check._drift`), ``lax.cond`` branches
(:mod:`casebook.check._branches`) and non-array leaves (:mod:`casebook.check._leaves`).
A failure inside the user's code becomes a finding with the exception's type and first
line; one that none of the families explains is kept for the caller.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax

from casebook import trace
from casebook.check._branches import error_findings, recorded_findings
from casebook.check._drift import DriftWatch, settled, unsettled_finding
from casebook.check._leaves import non_array_finding
from casebook.check._report import CheckReport, Finding, first_line
from casebook.check._trees import Split

MAX_STEPS = 16  # steps=None stops here if the state's types never settle

# The most steps an explicit ``steps=`` may ask for.  Each step is one more abstract trace
# (milliseconds for a small optax chain, a second or more for a model of many leaves), and
# the types after a step depend only on the types before it, so once a step keeps them
# every later step does too: more steps can only find a change that Python-side state in
# ``update`` makes (a counter in a closure).  64 is four times MAX_STEPS, longer than any
# drift the book or the corpus shows (step 3 at the latest), and keeps the worst case to
# seconds; ``steps=10**6`` would trace for over an hour.
MAX_EXPLICIT_STEPS = 64


def init_state(optimizer: Any, q: Split, report: CheckReport) -> Any | None:
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
            non_array_finding(
                q, "e.g. init(eqx.filter(model, eqx.is_inexact_array))", "init", error
            )
        )
        return state


@dataclass
class Run:
    """Everything one way of calling ``update`` needs, and what it found."""

    optimizer: Any
    params: Split
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
                    non_array_finding(
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
        previous, drifts, k = state, DriftWatch(state, self.call, self.report), 0
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
            if drifts.see(k, current):
                return k  # the structure changed: no further step can take this state
            if steps is None and settled(previous, current):
                return k  # a fixed point: the next step sees the same types
            previous = current
        if steps is None:
            self.report.append(unsettled_finding(k))
        return k

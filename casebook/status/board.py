"""The status board: today's state of every case and open problem on the pinned releases.

Each :class:`~casebook.cases.Trigger` is the smallest program that shows one bug, written so that its
outcome *is* the status: it raises (the bug still fails loudly), sets
``result = "silent"`` (it runs but computes the wrong thing, and the code checked that
against a reference), or sets ``result = "fixed"`` (it runs and the numbers are right).
:func:`run_board` runs them all on the current pins, each in a fresh subprocess
(:func:`casebook.releases.run`), and compares with the status recorded when the
trigger was written (``Trigger.recorded``), so a pin bump shows what changed.

The triggers live with their cases in the registry, :mod:`casebook.cases` (one module per
case, plus ``casebook.cases._findings``); this module runs them and shows them.
"""

from __future__ import annotations

import html
import importlib.metadata as md
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from casebook import cases, lock, releases
from casebook.cases import Trigger
from casebook.display import Cell, Table, TableDisplay
from casebook.project import LIBRARIES, PACKAGES
from casebook.releases import eras

__all__ = ["BOARD", "Board", "Row", "run_board"]

#: Every row of the board, read from the case registry (:mod:`casebook.cases`); first each
#: case's own trigger, then the problems the cases uncovered, then the check's findings.
BOARD: tuple[Trigger, ...] = cases.board_triggers()


@dataclass(frozen=True)
class Row:
    """A trigger and what it did on the pins: ``status`` and a one-line ``detail``; for a
    case's own trigger, also what it did in the era stack of the report (``era``: the
    era's name, its status and detail), else None."""

    trigger: Trigger
    status: str
    detail: str
    era: tuple[str, str, str] | None = None

    @property
    def changed(self) -> bool:
        return self.status != self.trigger.recorded


def _status(outcome: releases.Outcome) -> tuple[str, str]:
    if not outcome.ok:
        line = f"{outcome.exc_type}: {outcome.message.splitlines()[0]}"
        return "still failing", line if len(line) <= 120 else line[:117] + "..."
    if outcome.result == "fixed":
        return "fixed", "runs, and the result matches the reference"
    if outcome.result == "silent":
        return "silent", "runs without an error, but the result differs from the reference"
    return "unexpected", f"the trigger ended without a status (result={outcome.result!r})"


FAILS_IN_ERA = ("still failing", "silent")
"""What a case's own trigger does in its era: it raises, or, for a bug that raises nothing
(a leak, a wrong number: a kind of ``casebook/cases/symptoms.toml`` that does not raise),
it runs and its check of the result fails ("silent")."""

_STATUS_COLORS = {"fixed": "#1a7f37", "still failing": "#cf222e", "silent": "#9a6700"}


def _cells(r: Row) -> tuple[Cell, ...]:
    """One board row as display cells: text for the terminal, links and colour in HTML."""
    t = r.trigger
    key = Cell(
        t.key,
        html=(
            f'<a href="{html.escape(t.upstream)}">{html.escape(t.key)}</a>' if t.upstream else None
        ),
    )
    found = " [found by the book's check]" if t.found_by_check else ""
    page = html.escape(t.case.split("/")[-1] + ".html")
    marker = " <i>(found by the book's check)</i>" if found else ""
    what = Cell(t.title + found, html=f'{html.escape(t.title)}{marker} (<a href="{page}">case</a>)')
    was = f" (was {t.recorded})" if r.changed else ""
    status = Cell(
        r.status + was,
        html=(
            f'<b style="color:{_STATUS_COLORS.get(r.status, "black")}">{html.escape(r.status)}</b>'
            + (f"<br>changed: was {html.escape(t.recorded)}" if r.changed else "")
        ),
    )
    if r.era is None:
        era = Cell("-", title="no era: not an upstream report of a case")
    else:
        name, era_status, era_detail = r.era
        era = Cell(
            f"{era_status} ({name}): {era_detail}",
            html=(
                f'<b style="color:{_STATUS_COLORS.get(era_status, "black")}">'
                f"{html.escape(era_status)}</b> on <code>{html.escape(name)}</code><br>"
                f"<code>{html.escape(era_detail)}</code>"
            ),
        )
    return key, what, status, Cell(r.detail, code=True), era


def _moved() -> str:
    """The watched packages whose installed release differs from the lock's pin; the lock
    is read only in a clone (an installed package has none)."""
    if not releases.running_from_checkout():
        return "no lock at hand: casebook installed as a package"
    locked = lock.locked_versions(PACKAGES)
    moved = [
        f"{name} {locked[name]} -> {md.version(name)}"
        for name in locked
        if _installed(name) and md.version(name) != locked[name]
    ]
    return ", ".join(moved) if moved else "none: the lock's own pins"


class Board(list[Row], TableDisplay):
    """The rows of :func:`run_board`; a table as text and HTML (with links)."""

    def __init__(self, rows: Sequence[Row], versions: str) -> None:
        super().__init__(rows)
        self.versions = versions

    @property
    def changed(self) -> list[Row]:
        """Rows whose status differs from the one recorded with the trigger."""
        return [r for r in self if r.changed]

    def check(self) -> Board:
        """Assert every row: its status is the one recorded with its trigger, and each
        case's own trigger still fails in its era (raises, or, for a bug that
        raises nothing, runs with a wrong result). A changed row fails the page with the
        versions it ran on, and which of them differ from the lock's pins (the upstream
        release that changed it); returns the board, so a cell can check and show it.

        Raises:
            ExpectationError: a row changed; the message lists each one.
        """
        problems = [
            f"{r.trigger.key}: recorded {r.trigger.recorded!r}, now {r.status!r} ({r.detail})"
            for r in self.changed
        ]
        problems += [
            f"{r.trigger.key}: no longer fails in {r.era[0]} ({r.era[1]}: {r.era[2]})"
            for r in self
            if r.era is not None and r.era[1] not in FAILS_IN_ERA
        ]
        if problems:
            raise releases.ExpectationError(
                f"the board changed on {self.versions} (releases that differ from the "
                f"lock: {_moved()}):\n  " + "\n  ".join(problems)
            )
        return self

    def table(self) -> Table:
        return Table(
            ("bug", "what", "status", "what the trigger did", "as the reporter saw it (era)"),
            tuple(_cells(r) for r in self),
            caption=f"status on {self.versions}",
        )

    __str__ = TableDisplay.__str__
    __repr__ = list.__repr__


def _installed(name: str) -> bool:
    try:
        md.version(name)
    except md.PackageNotFoundError:
        return False
    return True


def eras_of(triggers: Sequence[Trigger]) -> dict[str, str]:
    """``{trigger key: era target}`` for each case's own trigger whose case has an era."""
    known = eras.load_eras()
    firsts = {c.triggers[0].key: c.key for c in cases.CASES if c.triggers}
    return {t.key: eras.ERA_PREFIX + firsts[t.key] for t in triggers if firsts.get(t.key) in known}


def run_board(triggers: Sequence[Trigger] = BOARD, *, workers: int = 2) -> Board:
    """Run every trigger on the current pins, and each case's own trigger in the era stack
    of its report too (fresh CPU children, in parallel)."""
    era_targets = eras_of(triggers)
    jobs = [(t, releases.CURRENT) for t in triggers] + [
        (t, era_targets[t.key]) for t in triggers if t.key in era_targets
    ]

    def one(job: tuple[Trigger, str]) -> releases.Outcome:
        t, target = job
        return releases.run(t.code, target, x64=t.x64, timeout=180)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        outcomes = dict(zip([(t.key, target) for t, target in jobs], pool.map(one, jobs)))
    rows = []
    for t in triggers:
        era = era_targets.get(t.key)
        seen = (era, *_status(outcomes[(t.key, era)])) if era else None
        rows.append(Row(t, *_status(outcomes[(t.key, releases.CURRENT)]), era=seen))
    pins = ", ".join(f"{p} {md.version(p)}" for p in LIBRARIES)
    return Board(rows, pins)

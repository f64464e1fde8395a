"""What the book says about an outcome, checked: :func:`expect` and version tables.

:func:`expect` asserts one :class:`~casebook.releases.Outcome` (raised this type,
with a message matching that; or ran cleanly; imported these versions). A
:class:`VersionTable` holds the outcomes of several triggers across several releases,
run live by :func:`version_table`, and checks them cell by cell; it renders through
:mod:`casebook.display`. A mismatch raises :class:`ExpectationError` with the captured
traceback and output, so a failing test shows what really happened.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any

from casebook.display import Cell, Table, TableDisplay
from casebook.releases._outcome import Outcome
from casebook.releases._runner import run
from casebook.releases._targets import Target, place_of
from casebook.releases.errors import ExpectationError


@dataclasses.dataclass(frozen=True)
class Asserted:
    """One exception that :func:`expect` saw asserted: on which target (its label), of
    which type, with which ``match`` pattern (None: any message), and its message."""

    target: str
    exc_type: str
    match: str | None
    message: str = ""


_ASSERTED: list[Asserted] = []


def asserted() -> list[Asserted]:
    """Every exception asserted in this process so far, in order: what a page's last
    cell holds against the registry's wordings (``cases.unlisted``), so every wording a
    page asserts is on the Errors page and known to ``explain``."""
    return list(_ASSERTED)


_OK_COLOUR, _FAIL_COLOUR = "#1a7f37", "#cf222e"


def _exc_name(raises: str | type[BaseException]) -> str:
    return raises if isinstance(raises, str) else raises.__name__


def expect(
    outcome: Outcome,
    *,
    raises: str | type[BaseException] | None = None,
    match: str | None = None,
    versions: Mapping[str, str] | None = None,
) -> Outcome:
    """Assert that ``outcome`` is what the book says; return it for chaining.

    With ``raises``, the code must have raised that exception type (or a subclass), and
    ``match`` (a regular expression) must be found in its message. Without ``raises``
    the code must have run cleanly. ``versions`` (``{"optax": "0.1.9"}``) checks the
    versions actually imported. A mismatch raises :class:`ExpectationError` carrying the
    captured traceback and output, so a failing test shows what really happened.

    Args:
        outcome: the :class:`~casebook.releases.Outcome` of a run.
        raises: the exception class (or its name) the code must have raised; None: the
            code must have run cleanly.
        match: with ``raises``, a regular expression that ``re.search`` must find in
            the exception's message.
        versions: ``{package: version}`` the code must have imported.

    Returns:
        ``outcome``, unchanged.

    Raises:
        ExpectationError: the outcome differs; the message says how, then shows the
            child's traceback, stdout and stderr.

    Examples:
        >>> from casebook import releases
        >>> outcome = releases.run("int('x')")
        >>> expect(outcome, raises=ValueError, match="invalid literal").summary
        "ValueError: invalid literal for int() with base 10: 'x'"
        >>> expect(outcome)
        Traceback (most recent call last):
            ...
        casebook.releases.errors.ExpectationError: [current] expected the code to run cleanly, but it raised ValueError: invalid literal for int() with base 10: 'x'
        --- traceback ---
        ...
    """
    problems = []
    if raises is None:
        if not outcome.ok:
            problems.append(f"expected the code to run cleanly, but it raised {outcome.summary}")
    else:
        name = _exc_name(raises)
        if outcome.ok:
            problems.append(f"expected {name}, but the code ran without an exception")
        elif name not in outcome.exc_types:
            problems.append(
                f"expected {name}, but it raised {outcome.exc_type} "
                f"(a {', '.join(outcome.exc_types[:3])})"
            )
        elif match is not None and not re.search(match, outcome.message):
            problems.append(f"{name} was raised, but its message has no match for {match!r}")
    for package, want in (versions or {}).items():
        got = outcome.version(package)
        if got != want:
            problems.append(f"expected {package} {want} to be imported, got {got}")
    if problems:
        raise ExpectationError(explain(outcome, problems))
    if raises is not None:
        _ASSERTED.append(Asserted(outcome.target, _exc_name(raises), match, outcome.message))
    return outcome


def explain(outcome: Outcome, problems: list[str]) -> str:
    """The message of an :class:`ExpectationError`: the problems, then the evidence
    (traceback or message, and the tails of stdout and stderr)."""
    parts = [f"[{outcome.target}] " + "; ".join(problems)]
    if outcome.traceback:
        parts.append("--- traceback ---\n" + outcome.traceback[-4000:])
    elif outcome.message:
        parts.append("--- message ---\n" + outcome.message[-2000:])
    if outcome.stdout.strip():
        parts.append("--- stdout (tail) ---\n" + outcome.stdout[-2000:])
    if outcome.stderr.strip():
        parts.append("--- stderr (tail) ---\n" + outcome.stderr[-2000:])
    return "\n".join(parts)


Expected = None | str | type | tuple
"""What a table cell should be: ``None`` for OK, an exception type, or ``(type, regex)``."""


@dataclasses.dataclass(repr=False)
class VersionTable(TableDisplay):
    """Outcomes of several triggers across several releases, measured live.

    Made by :func:`version_table` (one code string per column) or
    :func:`~casebook.releases.program_table` (one variant of a program per column). It
    prints as a text table and shows as HTML: one row per release, its imported
    versions, and in each column the value the run returned (``cell_value``; ``OK``
    when none) or the exception type (green or red, the message's first line as the
    tooltip).

    Args:
        columns: the triggers' names.
        rows: the releases' labels (``"optax==0.1.9"``, ``"current"``).
        cells: the :class:`~casebook.releases.Outcome` of each ``(row, column)``.
    """

    columns: list[str]
    rows: list[str]
    cells: dict[tuple[str, str], Outcome]

    def outcome(self, row: str, column: str | None = None) -> Outcome:
        """The outcome of trigger ``column`` (default: the first) on release ``row``.

        Args:
            row: the release's label, one of ``rows``.
            column: the trigger's name; None for the first column.

        Returns:
            The :class:`~casebook.releases.Outcome`.

        Examples:
            >>> from casebook import releases
            >>> table = releases.version_table({"adds": "result = 1 + 1"}, ["current"])
            >>> table.outcome("current").result
            2
        """
        return self.cells[(row, column or self.columns[0])]

    def check(self, expected: Mapping[str, Expected | Mapping[str, Expected]]) -> VersionTable:
        """Assert listed cells: ``{row: want}`` or ``{row: {column: want}}``.

        ``want`` is ``None`` (runs cleanly), an exception type (or its name), or a pair
        ``(type, regex)`` whose regex must match the message.

        Args:
            expected: ``{row: want}`` (every column of the row) or
                ``{row: {column: want}}``; rows and columns left out are not checked.

        Returns:
            The table itself, so a cell can check and show it in one line.

        Raises:
            KeyError: a row is not in the table.
            ExpectationError: a cell differs from its ``want``.

        Examples:
            >>> from casebook import releases
            >>> table = releases.version_table(
            ...     {"adds": "result = 1 + 1", "divides": "1 / 0"}, ["current"]
            ... )
            >>> _ = table.check(
            ...     {"current": {"adds": None, "divides": (ZeroDivisionError, "by zero")}}
            ... )
            >>> table.check({"current": None})
            Traceback (most recent call last):
                ...
            casebook.releases.errors.ExpectationError: [current] expected the code to run cleanly, but it raised ZeroDivisionError: division by zero
            ...
        """
        for row, want in expected.items():
            if row not in self.rows:
                raise KeyError(f"no row {row!r} in the table; rows are {self.rows}")
            per_col = want if isinstance(want, Mapping) else {c: want for c in self.columns}
            for col, exc in per_col.items():
                raises, match = exc if isinstance(exc, tuple) else (exc, None)
                expect(self.cells[(row, col)], raises=raises, match=match)
        return self

    def _imported(self) -> tuple[dict[str, str], str]:
        """Per row, the imported versions that differ between rows; and a caption with
        the versions every row shares (``jax 0.10.2, equinox 0.13.8``)."""
        per_row = {
            r: [
                part.strip()
                for part in self.cells[(r, self.columns[0])].imported.split(",")
                if part.strip()
            ]
            for r in self.rows
        }
        shared = [
            p for p in next(iter(per_row.values()), []) if all(p in v for v in per_row.values())
        ]
        varying = {r: ", ".join(p for p in v if p not in shared) or "-" for r, v in per_row.items()}
        return varying, ("every row imported " + ", ".join(shared)) if shared else ""

    def table(self) -> Table:
        """One row per release: its name, the versions it imported that differ from the
        other rows', and per trigger the value it returned (``cell_value``; ``OK`` when
        it returned none) or the exception type (green or red in HTML, the first line of the
        message as the tooltip): a count the prose quotes is in the table."""
        varying, caption = self._imported()
        nowrap = "white-space:nowrap"
        rows = []
        for r in self.rows:
            cells: list[Cell] = [Cell(r, code=True, style=nowrap), Cell(varying[r], style=nowrap)]
            for c in self.columns:
                o = self.cells[(r, c)]
                colour = _OK_COLOUR if o.ok else _FAIL_COLOUR
                cells.append(
                    Cell(
                        cell_value(o.result) if o.ok else o.exc_type or "?",
                        style=f"color:{colour};font-weight:600",
                        title=o.summary,
                    )
                )
            rows.append(tuple(cells))
        return Table(("release", "imported", *self.columns), tuple(rows), caption)


def cell_value(result: Any) -> str:
    """A run's returned value as a table shows it: ``OK`` for none, a whole float as an
    integer, a mapping as ``key: value`` pairs, a list joined, at most 120 characters.

    Examples:
        >>> cell_value(None), cell_value(2.0), cell_value({"cond": 1.0, "integer_pow": 1.0})
        ('OK', '2', 'cond: 1, integer_pow: 1')
    """
    if result is None:
        return "OK"
    if isinstance(result, float) and result.is_integer():
        text = str(int(result))
    elif isinstance(result, dict):
        text = ", ".join(f"{k}: {cell_value(v)}" for k, v in result.items())
    elif isinstance(result, list | tuple):
        text = ", ".join(cell_value(v) for v in result)
    else:
        text = str(result)
    return text if len(text) <= 120 else text[:117] + "..."


def version_table(
    triggers: str | Mapping[str, str],
    targets: Sequence[Target],
    *,
    workers: int = 2,
    **run_kwargs: Any,
) -> VersionTable:
    """Run each trigger on each target (in parallel subprocesses) and tabulate.

    ``triggers`` is one code string or ``{column name: code}``. Rows are labelled by the
    target (``"optax==0.1.9"``, ``"current"`` or a patched release's label). Code of
    more than a line or two belongs in a program (:func:`~casebook.releases.program_table`).

    Args:
        triggers: one code string (a column named ``trigger``), or
            ``{column name: code}``.
        targets: the releases to run on: manifest specs, ``"current"`` or
            :class:`~casebook.releases.PatchedRelease` s.
        workers: how many runs go at once.
        **run_kwargs: passed to every :func:`~casebook.releases.run` (``x64=True``,
            ``timeout=``, ``inputs=``).

    Returns:
        The :class:`VersionTable`, one row per target, one column per trigger.

    Examples:
        >>> from casebook import releases
        >>> table = version_table({"adds": "result = 1 + 1", "divides": "1 / 0"}, ["current"])
        >>> table.rows, table.columns
        (['current'], ['adds', 'divides'])
        >>> table.outcome("current", "divides").summary
        'ZeroDivisionError: division by zero'
    """
    columns = {"trigger": triggers} if isinstance(triggers, str) else dict(triggers)
    for t in targets:  # each environment built once, before the workers start
        place_of(t)
    jobs = [(str(t), t, c) for t in targets for c in columns]
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {
            (row, col): pool.submit(run, columns[col], t, **run_kwargs) for row, t, col in jobs
        }
        cells = {key: f.result() for key, f in futures.items()}
    return VersionTable(columns=list(columns), rows=[str(t) for t in targets], cells=cells)

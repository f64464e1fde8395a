"""The result of :func:`casebook.check.check_optimizer`: findings and the report.

A :class:`Finding` is one problem (or note) with its family, severity, place, what and
why; a :class:`CheckReport` is the list of them, readable as text and as an HTML table,
with :meth:`CheckReport.raise_if_problems` for tests.  Kept apart from the check itself so
that every part of the check (the input notes, the stepping, each family) can make
findings without importing the whole check.
"""

from __future__ import annotations

import functools
import html
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from casebook.display import PlainText, Table
from casebook.project import BOOK_URL

Family = Literal[
    "state drift", "non-array leaf", "callable hyperparameter", "donated state", "crash"
]
Severity = Literal["error", "warning", "note"]


FAMILIES_FILE = Path(__file__).resolve().parent / "families.toml"
"""The families' one home (their numbers, names and sections), read by the registry and
``explain`` too. A :class:`Finding`'s ``family`` is the key the toml calls ``check_family``;
the report names the family by its number and title."""


@functools.cache
def _families() -> dict[str, dict[str, Any]]:
    """Each family the check sees, by its ``check_family``: its row of ``families.toml``."""
    with open(FAMILIES_FILE, "rb") as f:
        rows = tomllib.load(f)["family"]
    return {row["check_family"]: row for row in rows if row["check_family"]}


def family_name(family: str) -> str:
    """How the report names ``family`` (``"state drift"``): ``"family 1, state that changes
    type"``, from ``families.toml``; a name the toml does not have (``"crash"``) as it is."""
    row = _families().get(family)
    return f"family {row['number']}, {row['title'].lower()}" if row else family


def family_page(family: str) -> str:
    """The published section of the lessons page on ``family`` (``"state drift"``), where
    the family's cases, findings and fixes are; ``""`` for a family no page has
    (``"crash"``)."""
    row = _families().get(family)
    if not row:
        return ""
    return f"{BOOK_URL}{row.get('docname', 'book/lessons')}.html#{row['anchor']}"


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
        name = family_name(self.family)
        return f"{self.severity.upper():7} {name}: {self.where}: {self.what}{why}"


class CheckReport(PlainText, list[Finding]):
    """The findings of :func:`check_optimizer`, in the order they were found.

    ``steps`` is the number of update steps traced (per way of calling ``update``).
    """

    def __init__(self, findings: Any = (), steps: int = 0) -> None:
        super().__init__(findings)
        self.steps = steps

    @property
    def problems(self) -> list[Finding]:
        """Errors and warnings (not notes)."""
        return [f for f in self if f.severity != "note"]

    @property
    def errors(self) -> list[Finding]:
        """The findings of severity ``error``."""
        return [f for f in self if f.severity == "error"]

    @property
    def ok(self) -> bool:
        """True when no finding is an error or a warning."""
        return not self.problems

    def families(self) -> set[str]:
        """The families of the errors and warnings."""
        return {f.family for f in self.problems}

    def __str__(self) -> str:
        head = (
            f"check_optimizer: init and {self.steps} update step(s) traced; "
            f"{len(self.errors)} error(s), {len(self.problems) - len(self.errors)} warning(s)"
        )
        if not self:
            return head + "; nothing found"
        pages = sorted((family_name(f), family_page(f)) for f in self.families())
        links = [f"  {name}: its cases and fixes: {url}" for name, url in pages if url]
        return "\n".join([head] + [f"  {f}" for f in self] + links)

    def table(self) -> Table:
        """The findings as a :class:`~casebook.display.Table`, one row each."""
        return Table(
            ("severity", "family", "where", "what", "why"),
            tuple((f.severity, family_name(f.family), f.where, f.what, f.why) for f in self),
        )

    def _repr_html_(self) -> str:
        head = f"<p>{html.escape(str(self).splitlines()[0])}</p>"
        return head + self.table()._repr_html_() if self else head

    def raise_if_problems(self, *, warnings: bool = False) -> CheckReport:
        """Raise :class:`OptimizerCheckError` listing the errors (and the warnings, with
        ``warnings=True``); return the report unchanged otherwise."""
        bad = self.problems if warnings else self.errors
        if bad:
            raise OptimizerCheckError(
                "\n".join([str(self).splitlines()[0]] + [f"  {f}" for f in bad])
            )
        return self


def first_line(error: BaseException, width: int = 160) -> str:
    """``'TypeError: <first line of the message>'``, cut to ``width`` characters.

    Args:
        error: the exception.
        width: the most characters of the message's first line to keep.

    Returns:
        The exception's type name and the first line of its message.
    """
    text = (str(error).strip() or repr(error)).splitlines()
    line = text[0] if text else ""
    line = line if len(line) <= width else line[: width - 3] + "..."
    return f"{type(error).__name__}: {line}"

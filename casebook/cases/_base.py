"""The shapes of the case registry: what one case of the book is, as data.

A case module (``casebook/cases/optax_828/__init__.py`` and its siblings) fills in one :class:`Case`:
the card of its notebook (issue, dates, releases, fix commits), the error each trigger
raises, the status-board programs (:class:`Trigger`) and the set-ups that
``book/lessons.ipynb`` hands to :func:`casebook.check.check_optimizer` (:class:`CheckSetup`).
The notebooks, the board, the lessons page and the tables in README.md and the introduction
read these, or ``tests/test_cases.py`` checks them against these, so a fact about a case is
written once.

Standard library only: the scaffold command and child processes on old releases import it.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "FACTS_FILE",
    "STATUSES",
    "Case",
    "CheckSetup",
    "ExpectedError",
    "Issue",
    "Message",
    "Trigger",
    "read_facts",
    "read_issue",
]

FACTS_FILE = "case.toml"
"""The file of a case's folder that holds its issue and its era, written once."""

#: The statuses a board trigger can record: see :mod:`casebook.status.board`.
STATUSES = ("fixed", "still failing", "silent")


@dataclass(frozen=True)
class Trigger:
    """One bug's smallest program for the status board, and the status it had when it was
    written here (``recorded``, one of :data:`STATUSES`).

    The program's outcome *is* the status: it raises (still failing), sets
    ``result = "silent"`` (runs, but a reference it computes disagrees) or
    ``result = "fixed"``.
    """

    key: str
    title: str
    upstream: str  # the issue it comes from (URL), or "" for a problem with no report
    case: str  # the book page that tells its story (docname)
    code: str
    recorded: str  # one of STATUSES
    x64: bool = False
    found_by_check: bool = False  # found by the book's check (casebook.check), not by a report


@dataclass(frozen=True)
class Issue:
    """The upstream report a case starts from, as its card cites it."""

    url: str
    title: str
    opened: str  # YYYY-MM-DD
    closed: str | None  # YYYY-MM-DD where the card records it, else None
    bib_key: str  # the key in book/references.bib that the card cites

    @property
    def label(self) -> str:
        """``optax#828`` for ``https://github.com/google-deepmind/optax/issues/828``."""
        m = re.search(r"github\.com/[^/]+/([^/]+)/issues/(\d+)", self.url)
        if not m:
            raise ValueError(f"not a GitHub issue URL: {self.url}")
        return f"{m.group(1)}#{m.group(2)}"


@dataclass(frozen=True)
class ExpectedError:
    """What one trigger of the notebook raises, as the notebook asserts it.

    ``match`` is the stable fragment exactly as the notebook writes it (a ``--match``
    regex of an ``%%on_release`` cell, or the string of an ``assert ... in``), so a test
    can find it in the notebook's code; ``where`` says where it is raised, in words.
    """

    trigger: str
    exc_type: str
    match: str
    where: str
    release: str = "current"


@dataclass(frozen=True)
class Message:
    """One wording of an error the book asserts, verbatim, and where it appears.

    The Errors page (``book/errors.md``), ``python3 -m casebook explain`` and the IPython
    extension (``%load_ext casebook``) all read these; ``tests/test_errors.py`` runs each
    ``code`` on its ``stack`` and checks that it prints ``text``.

    ``text`` is the message as printed (its first lines, whole), with hexadecimal
    addresses written ``0x…``; ``exc_type`` the exception's class name; ``stack`` the
    target that prints it (``"current"``, ``"era:optax-828"``, ``"optax==0.1.9"``);
    ``versions`` where it appears, in words (``"jax 0.4.25 to 0.4.35"``); ``code`` a
    program that raises it on ``stack``; ``api`` the call it came through
    (``"MultiSteps.update under jit"``, ``"lax.scan"``); ``anchor`` the label of the page
    section that proves it; ``today`` marks a wording today's releases print.
    ``distinctive=False`` marks a wording any code could print (``'NoneType' object is
    not callable``): the Errors page lists it, but ``explain`` does not answer it alone.
    """

    text: str
    exc_type: str
    stack: str
    versions: str
    code: str
    api: str
    anchor: str
    today: bool = False
    distinctive: bool = True


@dataclass(frozen=True)
class CheckSetup:
    """One optimizer set-up that the lessons page checks with ``check_optimizer``.

    ``build()`` returns the keyword arguments of :func:`casebook.check.check_optimizer`
    (``optimizer``, ``params`` and any of its options). ``buggy`` says whether the check
    must find an error; ``release`` is where the set-up runs (``"current"``, or a spec
    such as ``"optax==0.1.9"`` for a bug that exists only on an old release, run in a
    subprocess), with 64-bit mode where ``x64``.
    """

    name: str
    buggy: bool
    build: Callable[[], Mapping[str, Any]]
    release: str = "current"
    x64: bool = False


@dataclass(frozen=True)
class Case:
    """One case of the book: its card, the errors its triggers raise, its board rows and
    its check set-ups. ``key`` (``optax-828``) names it in the registry."""

    number: int
    key: str
    issue: Issue
    libraries: tuple[str, ...]
    affected: tuple[str, ...]  # release specs the notebook measures as buggy
    first_fixed: str | None  # release spec, or None when no release fixes it
    fix_commits: tuple[str, ...]
    docname: str  # notebooks/NN-..., without .ipynb
    summary: str  # one line: what breaks (README and intro tables)
    errors: tuple[ExpectedError, ...] = ()
    triggers: tuple[Trigger, ...] = ()
    checks: tuple[CheckSetup, ...] = field(default=())
    messages: tuple[Message, ...] = ()  # every wording the book asserts (the Errors page)
    fix: str = ""  # the card's "Do this": code that runs on today's release (a page cell)
    why: str = ""  # the card's "Why": one paragraph, as the page's card prints it
    still_open: str = ""  # the card's "Still open": what the fix does not cover

    @property
    def today(self) -> tuple[Message, ...]:
        """The wordings today's jax prints, the card's own first (the card leads with it,
        and ``explain`` shows it)."""
        return tuple(m for m in self.messages if m.today)

    @property
    def notebook(self) -> str:
        """The notebook's path relative to the repository root."""
        return self.docname + ".ipynb"

    @property
    def first_fixed_text(self) -> str:
        """How the card's "First fixed release" row begins: ``optax 0.2.0`` or ``none``."""
        return self.first_fixed.replace("==", " ") if self.first_fixed else "none"

    def unasserted(self, seen: Iterable[Any]) -> list[ExpectedError]:
        """The expected errors on a release other than ``current`` that were not asserted
        on that very release: ``seen`` is what :func:`casebook.releases.asserted` returns
        (records with ``target``, ``exc_type`` and ``match``). A page's last cell asserts
        this is empty, so each expected error is proven where the registry says."""
        seen = list(seen)
        return [
            error
            for error in self.errors
            if error.release != "current"
            and not any(
                s.target == error.release
                and s.exc_type == error.exc_type
                and s.match is not None
                and error.match in s.match
                for s in seen
            )
        ]

    def check(self, name: str) -> CheckSetup:
        """The check set-up called ``name``."""
        for setup in self.checks:
            if setup.name == name:
                return setup
        raise KeyError(
            f"{self.key}: no check set-up {name!r} (have {[s.name for s in self.checks]})"
        )


def read_facts(folder: str | Path) -> dict[str, Any]:
    """The facts of the case in ``folder`` (its :data:`FACTS_FILE`): ``[issue]`` (url,
    title, opened, closed, bib_key) and ``[era]`` (python, packages). A file of the folder
    (a module's ``__file__``) stands for the folder."""
    folder = Path(folder)
    if folder.is_file():
        folder = folder.parent
    with open(folder / FACTS_FILE, "rb") as f:
        return tomllib.load(f)


def read_issue(folder: str | Path) -> Issue:
    """The :class:`Issue` of the case in ``folder``, from its :data:`FACTS_FILE`."""
    issue = read_facts(folder)["issue"]
    return Issue(
        url=issue["url"],
        title=issue["title"],
        opened=issue["opened"],
        closed=issue.get("closed"),
        bib_key=issue["bib_key"],
    )

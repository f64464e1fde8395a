"""The shapes of the case registry, and how a case folder is read into them.

A case is data. Its folder (``casebook/cases/optax_828/``) holds ``case.toml``: the issue
and the era, the card (``[card]``: why, still open), every wording the book asserts (``[[message]]``, each
run on its stack by ``tests/test_messages.py``), the status board's rows
(``[[trigger]]``), the set-ups the lessons page checks (``[[check]]``), the workshop block
(``[workshop]``) and what each exercise's correct answer prints (``[answers]``). Its
programs are files of ``scripts/``, run as they are: ``wrong.py`` and ``fix.py`` are the card's
"You probably wrote" and "Do this", ``reporter.py`` the reporter's program (the story's repro),
and each message and trigger names the script(s) that produce it. :func:`read_case` turns the folder into one :class:`Case`; the folder's
``__init__.py`` holds only what must be code (the check set-ups' builders).

The notebooks, the board, the lessons page, ``explain``, the Errors page and the tables in
README.md and the introduction read these, and ``python3 -m casebook sync`` writes what a
reader sees from them, so a fact about a case is written once.

Standard library only: the scaffold command and child processes on old releases import it.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from casebook.cases._signatures import Signature, signatures

__all__ = [
    "FACTS_FILE",
    "STATUSES",
    "Case",
    "CheckSetup",
    "Issue",
    "Message",
    "Trigger",
    "read_case",
    "read_facts",
    "read_issue",
    "script",
]

FACTS_FILE = "case.toml"
"""The file of a case's folder that holds its data: issue, era, card, messages, rows."""

SCRIPTS = "scripts"
"""The folder of a case's programs, each run as it is (``fix.py``: the card's fix)."""

_ADDRESS = re.compile(r"0x[0-9a-fA-F]+|0x…")
"""A hexadecimal address as printed, or as the book writes it (``0x…``)."""
_INSTALLED = re.compile(r"(?<= at )\S*/(?=(?:optax|equinox|diffrax|jax)/)")

# The statuses a board trigger can record (documented in casebook.cases, which exports it).
STATUSES = ("fixed", "still failing", "silent")

SYMPTOMS_FILE = Path(__file__).with_name("symptoms.toml")
"""The kinds of case (``[[symptom]]``: key, raises, heading), which a card's ``symptom``
names."""


def symptoms(path: Path = SYMPTOMS_FILE) -> dict[str, dict[str, Any]]:
    """The kinds of case, ``{"error": {"raises": True, "heading": ...}, ...}``."""
    with open(path, "rb") as f:
        return {s["key"]: s for s in tomllib.load(f)["symptom"]}


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
        m = re.search(r"github\.com/[^/]+/([^/]+)/(?:issues|pull)/(\d+)", self.url)
        if not m:
            raise ValueError(f"not a GitHub issue URL: {self.url}")
        return f"{m.group(1)}#{m.group(2)}"


@dataclass(frozen=True)
class Message:
    """One wording of an error the book asserts, verbatim, and where it appears.

    The Errors page (``book/errors.md``), ``python3 -m casebook explain`` and the IPython
    extension (``%load_ext casebook``) all read these; ``tests/test_messages.py`` runs each
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
    script: str = ""  # the script(s) of the case folder that ``code`` was read from


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
    triggers: tuple[Trigger, ...] = ()
    checks: tuple[CheckSetup, ...] = field(default=())
    messages: tuple[Message, ...] = ()  # every wording the book asserts (the Errors page)
    signatures: tuple[Signature, ...] = ()  # what marks a variant as this case's (explain)
    fix: str = ""  # the card's "Do this": scripts/fix.py, runs on today's release
    wrong: str = ""  # the card's "You probably wrote": scripts/wrong.py
    reporter: str = ""  # the reporter's program, the story's repro: scripts/reporter.py
    reporter_fix: str = ""  # the story's fix of it, where it has one: scripts/reporter_fix.py
    why: str = ""  # the card's "Why": one paragraph, as the page's card prints it
    still_open: str = ""  # the card's "Still open": what the fix does not cover
    card: Mapping[str, str] = field(default_factory=dict, hash=False, compare=False)
    # the facts table under the story's repro ([facts]: upstream after the issue's title and
    # date, libraries_note, affected, first_fixed, symptom, lesson), written by sync
    facts: Mapping[str, str] = field(default_factory=dict, hash=False, compare=False)
    answers: Mapping[str, str] = field(default_factory=dict, hash=False, compare=False)
    workshop: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)
    folder: Path | None = None  # the case's folder (None: built in code, as tests do)

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
        """How the card's "First fixed release" row begins, ``optax 0.2.0`` or ``none``."""
        return self.first_fixed.replace("==", " ") if self.first_fixed else "none"

    @property
    def do_this(self) -> tuple[str, str]:
        """The card's "Do this" block as ``(language, text)``, the upgrade command where the
        fix is an upgrade (``[card] upgrade``), else ``scripts/fix.py``."""
        upgrade = self.card.get("upgrade")
        return ("bash", upgrade) if upgrade else ("python", self.fix)

    @property
    def fix_program(self) -> str:
        """The program that shows the fix working on today's releases, ``scripts/fix.py``;
        or, where the fix is an upgrade, the very code the card says you wrote."""
        return self.wrong if self.card.get("upgrade") else self.fix

    @property
    def symptom(self) -> Mapping[str, Any]:
        """The case's kind (``[card] symptom``, a key of ``symptoms.toml``; ``"error"`` by
        default): whether the bug raises, and the card's heading."""
        kinds = symptoms(self.folder.parent / SYMPTOMS_FILE.name if self.folder else SYMPTOMS_FILE)
        return kinds[self.card.get("symptom", "error")]

    @property
    def raises(self) -> bool:
        """Whether the bug raises (the card's "Today" block is then an exception's message).
        A bug that raises nothing (a leak, a wrong number) has a kind that does not: its
        "Today" block is what ``scripts/wrong.py`` prints where the card says it fails
        (:meth:`today_printed`)."""
        return bool(self.symptom["raises"])

    def today_shown(self, exc_type: str, message: str) -> bool:
        """Whether the card's "Today" block (``[card] today``) is ``exc_type: message`` as
        printed: its first part begins the message, and each part after a line ``…`` (lines
        left out) follows in order. What differs between machines is written as the card
        writes it: an address as ``0x…``, the folder a library is installed in as ``…/``."""
        return self._shows(f"{exc_type}: {message}")

    def today_printed(self, stdout: str) -> bool:
        """Whether the card's "Today" block is what a program printed (``stdout``), read as
        :meth:`today_shown` reads a message: for a bug that raises nothing (:attr:`raises`)."""
        return self._shows(stdout)

    def _shows(self, printed: str) -> bool:
        text = _INSTALLED.sub("…/", _ADDRESS.sub("0x…", printed))
        first, *rest = self.card.get("today", "").split("\n…\n")
        if not first or not text.startswith(first):
            return False
        at = len(first)
        for part in rest:
            at = text.find(part, at)
            if at < 0:
                return False
            at += len(part)
        return True

    def answer(self, label: str) -> str:
        """What a correct answer to exercise ``label`` (``case1-ex1``) prints, as the
        exercise's "What a correct answer prints" shows it (``sync`` writes it there)."""
        try:
            return self.answers[label]
        except KeyError:
            raise KeyError(f"{self.key}: no answer {label!r} in case.toml [answers]") from None

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
    title, opened, closed, bib_key) and ``[era]`` (python, download; the versions are in
    its ``era.txt``). A file of the folder (a module's ``__file__``) stands for the folder."""
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


def script(folder: str | Path, names: str | Iterable[str]) -> str:
    """The code of one script of the case folder (``"repro"``: ``scripts/repro.py``), or of
    several joined in order (a shared set-up, then the line that differs)."""
    folder = Path(folder)
    if folder.is_file():
        folder = folder.parent
    names = [names] if isinstance(names, str) else list(names)
    return "".join((folder / SCRIPTS / f"{name}.py").read_text() for name in names)


def _names(value: str | list[str]) -> str:
    return value if isinstance(value, str) else " + ".join(value)


def read_case(module_file: str | Path, *builders: Callable[[], Mapping[str, Any]]) -> Case:
    """The :class:`Case` of the folder of ``module_file`` (its ``__init__.py``), read from
    its :data:`FACTS_FILE` and scripts; ``builders`` are the functions that its
    ``[[check]]`` entries name by ``build``."""
    folder = Path(module_file).resolve().parent
    facts = read_facts(folder)
    case, card = facts["case"], facts.get("card", {})
    kinds = symptoms(folder.parent / SYMPTOMS_FILE.name)
    if card.get("symptom", "error") not in kinds:
        raise ValueError(
            f"{folder / FACTS_FILE}: [card] symptom = {card['symptom']!r} is no kind of "
            f"case in {SYMPTOMS_FILE.name} ({', '.join(kinds)}): add it there, or use one"
        )
    issue = read_issue(folder)
    built = {b.__name__: b for b in builders}
    docname = case["docname"]

    def trigger(t: dict[str, Any]) -> Trigger:
        return Trigger(
            t["key"],
            t["title"],
            t.get("upstream", issue.url),
            docname,
            script(folder, t["script"]),
            t["recorded"],
            x64=t.get("x64", False),
        )

    def message(m: dict[str, Any]) -> Message:
        return Message(
            text=m["text"],
            exc_type=m["exc_type"],
            stack=m["stack"],
            versions=m["versions"],
            code=script(folder, m["script"]),
            api=m["api"],
            anchor=m["anchor"],
            today=m.get("today", False),
            distinctive=m.get("distinctive", True),
            script=_names(m["script"]),
        )

    def check(c: dict[str, Any]) -> CheckSetup:
        if c["build"] not in built:
            raise KeyError(
                f"{folder.name}: [[check]] {c['name']!r} names {c['build']!r}, "
                f"which read_case was not given (have {sorted(built)})"
            )
        return CheckSetup(
            c["name"],
            c["buggy"],
            built[c["build"]],
            c.get("release", "current"),
            c.get("x64", False),
        )

    def text(name: str) -> str:
        path = folder / SCRIPTS / f"{name}.py"
        return path.read_text().rstrip("\n") if path.is_file() else ""

    return Case(
        number=case["number"],
        key=folder.name.replace("_", "-"),
        issue=issue,
        libraries=tuple(case["libraries"]),
        affected=tuple(case.get("affected", ())),
        first_fixed=case.get("first_fixed"),
        fix_commits=tuple(case.get("fix_commits", ())),
        docname=docname,
        summary=case["summary"],
        triggers=tuple(trigger(t) for t in facts.get("trigger", ())),
        checks=tuple(check(c) for c in facts.get("check", ())),
        messages=tuple(message(m) for m in facts.get("message", ())),
        signatures=signatures(
            facts.get("signature", ()),
            folder.name.replace("_", "-"),
            f"{issue.label} (case {case['number']})",
            docname,
        ),
        fix=text("fix"),
        wrong=text("wrong"),
        reporter=text("reporter"),
        reporter_fix=text("reporter_fix"),
        why=card.get("why", ""),
        still_open=card.get("still_open", ""),
        card={k: v for k, v in card.items() if k not in ("why", "still_open")},
        facts=dict(facts.get("facts", {})),
        answers=dict(facts.get("answers", {})),
        workshop=dict(facts.get("workshop", {})),
        folder=folder,
    )

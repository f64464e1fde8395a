"""The case registry: one folder per case of the book, each the one home of that case.

A case folder (``casebook/cases/optax_828/``) holds everything the book knows about one
upstream bug, as data: ``case.toml`` (its issue, era, card, messages, board rows, check
set-ups, workshop block and exercises' answers), ``scripts/`` (its programs, each run as it
is: the card's ``wrong.py`` and ``fix.py``, the messages' and rows' triggers), ``era.txt``
(the hashed lock of the era stack), ``__init__.py`` (the check set-ups' builders, the only
code: it calls ``read_case``) and its program modules (run on
releases by :mod:`casebook.releases`). ``CASES`` lists them in reading order (by
``Case.number``); :func:`get` looks one up by key (``"optax-828"``). Adding a case means
adding a folder (``python3 -m casebook new`` writes one from ``template/``; CONTRIBUTING.md).
:data:`FINDINGS` holds the status-board rows that belong to no case (the bugs the book's
check found, ``findings/``); :func:`board_triggers` orders every row for the board;
:func:`unlisted` names the asserted wordings no case lists. :data:`FAMILIES` are the bug
families of the lessons page (``casebook/check/families.toml``: their message patterns) and
:data:`SIGNATURES` what each case folder and finding declares marks a variant as its own
(``[[signature]]``), which ``explain`` ranks a traceback by. :func:`era_substitutions` names
each era's versions for the pages' prose (``{{ era_optax_828.jax }}``), and :func:`with_eras`
fills them into text read outside Sphinx.

Standard library only at import time: the case modules import jax and friends inside
their functions, so the scaffold command and old-release child processes can import this.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from casebook.cases import _base, _findings
from casebook.cases._base import (
    _ADDRESS,
    FACTS_FILE,
    Case,
    CheckSetup,
    Issue,
    Message,
    Trigger,
    symptoms,
)
from casebook.cases._signatures import (
    BugFamily,
    Pattern,
    Signature,
    family_words,
    read_families,
    validate,
)

if TYPE_CHECKING:
    from casebook.releases.eras import Era

#: The statuses a board trigger can record (see :mod:`casebook.status.board`).
STATUSES = _base.STATUSES

#: The check's findings in optax, as board rows (``cases/findings/findings.toml``).
FINDINGS = _findings.TRIGGERS

_SPACE = re.compile(r"\s+")

#: Exceptions of the book's own making, which no upstream release prints.
OWN = frozenset({"OptimizerCheckError", "ExpectationError", "AssertionError"})

__all__ = [
    "CASES",
    "FAMILIES",
    "FINDINGS",
    "SIGNATURES",
    "STATUSES",
    "BugFamily",
    "Case",
    "CheckSetup",
    "Issue",
    "Message",
    "Pattern",
    "Signature",
    "Trigger",
    "board_triggers",
    "era_substitutions",
    "family",
    "family_of",
    "family_words",
    "get",
    "is_program",
    "load",
    "normalize",
    "read_families",
    "symptoms",
    "unlisted",
    "with_eras",
]

DIRECTORY = Path(__file__).resolve().parent


def _ordered(modules: Iterable[ModuleType]) -> tuple[Case, ...]:
    cases = sorted(
        (m.CASE for m in modules if isinstance(getattr(m, "CASE", None), Case)),
        key=lambda c: c.number,
    )
    keys = [c.key for c in cases]
    if len(set(keys)) != len(keys) or len({c.number for c in cases}) != len(cases):
        raise ValueError(f"case keys and numbers must be unique: {keys}")
    return tuple(cases)


def _modules() -> list[ModuleType]:
    """Every case folder's module (a subpackage with a facts file)."""
    return [
        importlib.import_module(f"{__name__}.{info.name}")
        for info in pkgutil.iter_modules([str(DIRECTORY)])
        if info.ispkg and (DIRECTORY / info.name / FACTS_FILE).is_file()
    ]


def load(directory: Path) -> tuple[Case, ...]:
    """The cases of another checkout's ``casebook/cases/`` (a scaffolded copy, say),
    loaded from its files; the package's own cases are :data:`CASES`."""
    modules = []
    for facts in sorted(Path(directory).glob(f"*/{FACTS_FILE}")):
        path = facts.parent / "__init__.py"
        name = f"_casebook_cases_{abs(hash(str(path)))}_{path.parent.name}"
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        modules.append(module)
    return _ordered(modules)


#: Every case, in reading order.
CASES: tuple[Case, ...] = _ordered(_modules())


#: The bug families of the lessons page (``families.toml``), in its order.
FAMILIES: tuple[BugFamily, ...] = read_families()


#: Every case's and finding's signature (what ``explain`` matches a variant by).
SIGNATURES: tuple[Signature, ...] = validate(
    (*(s for c in CASES for s in c.signatures), *_findings.SIGNATURES), FAMILIES
)


def family(key: str) -> BugFamily:
    """The family with this key (``"drift"``, ``"leaf"``, ``"callable"``)."""
    for f in FAMILIES:
        if f.key == key:
            return f
    raise KeyError(f"no family {key!r}; the registry has {[f.key for f in FAMILIES]}")


def family_of(case: Case, families: Iterable[BugFamily] = FAMILIES) -> BugFamily | None:
    """The family of ``case``: its first signature's, or the one whose ``cases`` lists it
    (a case that raises nothing has no signature); ``None`` for neither."""
    key = case.signatures[0].family if case.signatures else None
    return next((f for f in families if f.key == key or case.key in f.cases), None)


def get(key: str, cases: Iterable[Case] = CASES) -> Case:
    """The case with this key (``"optax-828"``) or issue label (``"optax#828"``)."""
    for case in cases:
        if key in (case.key, case.issue.label):
            return case
    raise KeyError(f"no case {key!r}; the registry has {[c.key for c in CASES]}")


def is_program(module: str) -> bool:
    """Whether a dotted module name is a program of a case folder
    (``casebook.cases.optax_828.doors``): written for old releases, run in child processes,
    never imported by the book's own process."""
    parts = module.split(".")
    return len(parts) == 4 and parts[:2] == ["casebook", "cases"] and parts[3] != "__init__"


def board_triggers(cases: Iterable[Case] = CASES) -> tuple[Trigger, ...]:
    """The status board's rows: each case's own trigger first, in case order, then the
    problems the cases uncovered, then the bugs found by the book's check."""
    cases = tuple(cases)
    return (
        tuple(c.triggers[0] for c in cases if c.triggers)
        + tuple(t for c in cases for t in c.triggers[1:])
        + FINDINGS
    )


def normalize(text: str) -> str:
    """A message in a comparable form: addresses as ``0x…``, runs of blanks as one space
    (how ``explain`` and the Errors page's checks compare wordings)."""
    return _SPACE.sub(" ", _ADDRESS.sub("0x…", text)).strip()


def unlisted(seen: Iterable[Any], cases: Iterable[Case] = CASES) -> list[Any]:
    """The asserted exceptions (``seen``: :func:`casebook.releases.asserted`'s records, with
    ``exc_type`` and ``message``) whose wording no case's message holds: a page's last cell
    asserts this is empty, so every wording a page asserts is on the Errors page and known
    to ``explain``. A wording is a message's first line (the lines after it name the
    reader's own paths, shapes and types); the book's own exceptions (``OWN``) are not
    upstream wordings."""
    known = [(m.exc_type, normalize(m.text.splitlines()[0])) for c in cases for m in c.messages]
    return [
        s
        for s in seen
        if s.exc_type not in OWN
        and not any(t == s.exc_type and text in normalize(s.message) for t, text in known)
    ]


ERA_REFERENCE = re.compile(r"\{\{\s*era_(\w+)\.(\w+)\s*\}\}")
"""How prose names an era's version: ``{{ era_optax_828.jax }}``, a MyST substitution."""


def era_substitutions(eras: Mapping[str, Era] | None = None) -> dict[str, dict[str, str]]:
    """Each era's versions as MyST substitutions, read from its ``era.txt`` (the one place
    they are written): ``{"era_optax_828": {"jax": "0.4.25", ...}}``, the ``NOTABLE``
    packages its lock pins. A page's prose writes ``{{ era_optax_828.jax }}``; the book's
    extension ``casebook_eras`` and the plain twins' render fill them in. ``eras``: the
    mapping ``casebook.releases.eras.load_eras`` returns (by default, its eras)."""
    from casebook.releases.eras import load_eras

    eras = load_eras() if eras is None else eras
    return {"era_" + name.replace("-", "_"): dict(e.packages) for name, e in eras.items()}


def with_eras(text: str, eras: Mapping[str, Era] | None = None) -> str:
    """``text`` with each era reference (``{{ era_optax_828.jax }}``) replaced by its version,
    as the book renders it: for card text read outside Sphinx (``explain``, a page's meta
    description). An unknown era or package raises ``KeyError``."""
    versions = era_substitutions(eras)
    return ERA_REFERENCE.sub(lambda m: versions["era_" + m.group(1)][m.group(2)], text)

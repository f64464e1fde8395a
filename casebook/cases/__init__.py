"""The case registry: one module per case of the book, each holding one :class:`Case`.

``CASES`` lists them in reading order (by ``Case.number``); :func:`get` looks one up by
key (``"optax-828"``). A case module is any module of this package that defines ``CASE``,
so adding a case means adding a module (``python3 -m casebook new-case`` writes one from
``template/``). :data:`FINDINGS` holds the status-board rows that belong to no case (the
bugs the book's check found); :func:`board_triggers` orders every row for the board.

Standard library only at import time: the case modules import jax and friends inside
their functions, so the scaffold command and old-release child processes can import this.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import sys
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType

from casebook.cases.base import STATUSES, Case, CheckSetup, ExpectedError, Issue, Trigger
from casebook.cases.check_findings import TRIGGERS as FINDINGS

__all__ = [
    "CASES",
    "FINDINGS",
    "STATUSES",
    "Case",
    "CheckSetup",
    "ExpectedError",
    "Issue",
    "Trigger",
    "board_triggers",
    "get",
    "load",
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
    return [
        importlib.import_module(f"{__name__}.{info.name}")
        for info in pkgutil.iter_modules([str(DIRECTORY)])
        if not info.ispkg
    ]


def load(directory: Path) -> tuple[Case, ...]:
    """The cases of another checkout's ``casebook/cases/`` (a scaffolded copy, say),
    loaded from its files; the package's own cases are :data:`CASES`."""
    modules = []
    for path in sorted(Path(directory).glob("*.py")):
        if path.stem == "__init__":
            continue
        name = f"_casebook_cases_{abs(hash(str(path)))}_{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        modules.append(module)
    return _ordered(modules)


#: Every case, in reading order.
CASES: tuple[Case, ...] = _ordered(_modules())


def get(key: str, cases: Iterable[Case] = CASES) -> Case:
    """The case with this key (``"optax-828"``) or issue label (``"optax#828"``)."""
    for case in cases:
        if key in (case.key, case.issue.label):
            return case
    raise KeyError(f"no case {key!r}; the registry has {[c.key for c in CASES]}")


def board_triggers(cases: Iterable[Case] = CASES) -> tuple[Trigger, ...]:
    """The status board's rows: each case's own trigger first, in case order, then the
    problems the cases uncovered, then the bugs found by the book's check."""
    cases = tuple(cases)
    return (
        tuple(c.triggers[0] for c in cases if c.triggers)
        + tuple(t for c in cases for t in c.triggers[1:])
        + FINDINGS
    )

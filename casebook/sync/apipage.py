"""``book/api.md``, generated from the packages' ``__all__``: exactly the names pages may use.

Each public package lists its API in ``__all__``; this module writes the reference page
from those lists, one section per package, in the order of :data:`SECTIONS`, with the
section's prose from there. A name enters the page when it enters an ``__all__``, and
leaves it when it leaves. ``tests/test_public_api.py`` fails when the page is out of date
and when a page uses a name that no ``__all__`` lists, so the page and the pages agree.

``python3 -m casebook sync`` writes the page (:func:`page_text`).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from casebook.project import ROOT

__all__ = ["PAGE", "SECTIONS", "Section", "page_text"]

PAGE = ROOT / "book" / "api.md"


@dataclass(frozen=True)
class Section:
    """One package's part of the page: its heading, the prose above the table, and the
    members shown for each class (the others show their docstring only)."""

    module: str
    heading: str
    prose: str = ""
    members: tuple[tuple[str, str], ...] = ()


SECTIONS = (
    Section(
        "casebook.check",
        "The check",
        "What the check looks for, with an example of each family on the book's own cases, "
        "is on the {doc}`lessons page <lessons>`, which also lists its options and its "
        "limits; the bugs it found in optax are on {doc}`check-findings`.",
        (("CheckReport", "ok, problems, errors, families, raise_if_problems, table"),),
    ),
    Section(
        "casebook.failure",
        "Exceptions, summarised",
        members=(
            ("Failure", "of, from_record, first_line, raised_at, last_frame_in, where, is_a"),
            ("Frame", "where, within, relative_to"),
        ),
    ),
    Section(
        "casebook.releases",
        "Runs on historical releases",
        "A notebook's kernel holds one version of each package, so code that must run on "
        "another release runs in a child process with that release first on its path, and "
        "comes back as an {py:class}`~casebook.releases.Outcome`. Every error about releases "
        "and runs is a {py:class}`~casebook.releases.ReleaseError`; a failed expectation is an "
        "{py:class}`~casebook.releases.ExpectationError` (an `AssertionError`, so a test "
        "reports it as a failure). Each message says what went wrong and, where there is one, "
        "the command that fixes it.",
        (
            ("Outcome", "failure, summary, version, imported, shown"),
            ("VersionTable", "outcome, check"),
            ("Patch", "apply"),
            ("PatchedRelease", "diff"),
        ),
    ),
    Section(
        "casebook.releases.program",
        "Programs of named variants",
        "A program is a module of a case's folder (`casebook/cases/optax_828/doors.py`, named "
        '`"optax_828.doors"`): its top level is the set-up, and each experiment is a function '
        "without arguments marked with {py:func}`~casebook.releases.program.variant`. The "
        "pages run it on releases and show its code one piece at a time, so they show what "
        "they ran without holding code in strings.",
    ),
    Section(
        "casebook.releases.eras",
        "Era stacks",
        "An era is the whole stack of the day an issue was reported, in a venv of its own; "
        'a run names it as its target, `"era:optax-828"`. Its facts live in the case\'s '
        "folder (`case.toml`, and the lock `era.txt`).",
    ),
    Section("casebook.trace", "The mechanism"),
    Section(
        "casebook.bench",
        "Benchmarks",
        members=(
            (
                "Timings",
                "median, iqr, ratio, claim, rows, table, plot, to_dict, from_dict",
            ),
        ),
    ),
    Section("casebook.bench.claims", "Claims about speed", members=(("Claim", "holds"),)),
    Section("casebook.bench.records", "Benchmark records"),
    Section("casebook.display", "Tables and numbers in prose"),
    Section(
        "casebook.cases",
        "The case registry",
        "One folder per case (`casebook/cases/optax_828/`): its issue and era (`case.toml`), "
        "its era lock, its {py:class}`~casebook.cases.Case` and its programs. Pages take a "
        "case's set-ups from here, so the lessons page and the case page run the same code.",
    ),
    Section("casebook.status.stack", "What a page ran on", members=(("Stack", "off_lock"),)),
    Section("casebook.status.board", "The status board"),
    Section("casebook.status.runs", "Where the pages have run"),
)
"""The page's sections, in order: every package a page may import from."""

_INTRO = """\
# API reference

Install the package in your own project and call the check on your optimizer set-up:

```bash
pip install "casebook @ git+https://github.com/jax-bug-casebook/jax-bug-casebook"
```

```python
from casebook.check import check_optimizer

report = check_optimizer(optimizer, params, grads, update_params=False)
print(report)
```

The rest of the package is what the pages are written with: summaries of exceptions, runs
on historical releases, the mechanism of a bug in types and jaxprs, honest benchmarks and
their claims, and the tables and numbers the pages show. This page lists exactly the names
each package exports (its `__all__`): what a page, or your own notebook, may use. It is
generated (`python3 -m casebook sync`), and the examples in the docstrings run as
tests (`tests/test_doctests.py`), so each one shows what the function really returns.
"""


def _directive(owner: ModuleType, name: str, members: dict[str, str]) -> str:
    """The autodoc directive of one exported name."""
    value = getattr(owner, name)
    if inspect.isclass(value) and issubclass(value, BaseException):
        return f".. autoexception:: {name}"
    if inspect.isclass(value):
        extra = f"\n   :members: {members[name]}" if name in members else ""
        return f".. autoclass:: {name}{extra}"
    if callable(value):
        return f".. autofunction:: {name}"
    doc = _data_docstring(owner, name)
    body = "\n".join(f"   {line}" if line else "" for line in doc.splitlines())
    return f".. py:data:: {name}\n\n{body}" if doc else f".. py:data:: {name}"


def _is_api_object(value: object) -> bool:
    """A class or function (autodoc reads its own docstring), not a constant."""
    return inspect.isclass(value) or callable(value)


def _data_docstring(owner: ModuleType, name: str) -> str:
    """The docstring written under ``name = ...`` in the module that defines it (the
    package itself or one of its modules): a re-exported constant has no docstring of
    its own, and autodoc would show its type's instead."""
    package = getattr(owner, "__path__", None)
    modules = [owner]
    if package is not None:
        prefix = owner.__name__ + "."
        modules += [
            importlib.import_module(info.name)
            for info in pkgutil.iter_modules(package, prefix)
            if not info.ispkg and not cases_program(info.name)
        ]
    seen: set[str] = set()
    while modules:
        module = modules.pop(0)
        if module.__name__ in seen:
            continue
        seen.add(module.__name__)
        body = ast.parse(Path(inspect.getfile(module)).read_text()).body
        for node, after in zip(body, body[1:]):
            targets = (
                node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
            )
            named = any(isinstance(t, ast.Name) and t.id == name for t in targets)
            if named and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
                return inspect.cleandoc(str(after.value.value))
        for node in body:  # a name imported from another casebook module: look there too
            if (
                isinstance(node, ast.ImportFrom)
                and (node.module or "").startswith("casebook")
                and any(alias.name == name for alias in node.names)
            ):
                modules.append(importlib.import_module(node.module or ""))
    return ""


def cases_program(module: str) -> bool:
    """A case folder's program, which is never imported here (it runs on old releases)."""
    parts = module.split(".")
    return len(parts) == 4 and parts[:2] == ["casebook", "cases"]


def section_text(section: Section) -> str:
    """One section: heading, prose, a summary table and a directive per name."""
    owner = importlib.import_module(section.module)
    names = list(owner.__all__)
    members = dict(section.members)
    parts = [f"## {section.heading}: `{section.module}`", ""]
    if section.prose:
        parts += [section.prose, ""]
    rst = [f".. py:module:: {section.module}", "", f".. currentmodule:: {section.module}", ""]
    rst += [".. autosummary::", ""]
    # Constants are left out of the table: autosummary would summarise their type's
    # docstring (a dict's, a str's); their own docstring is under them below.
    rst += [f"   {name}" for name in names if _is_api_object(getattr(owner, name))] + [""]
    rst += [_directive(owner, name, members) + "\n" for name in names]
    parts += ["```{eval-rst}", *rst, "```", ""]
    return "\n".join(parts)


def page_text() -> str:
    """The whole page, as :func:`main` writes it."""
    return _INTRO + "\n" + "\n".join(section_text(s) for s in SECTIONS).rstrip() + "\n"

"""Run a program of named variants on releases, tabulate it, and show its code.

A program (:mod:`casebook.releases.program`) is a module of a case's folder:
a set-up and a few ``@variant`` functions. :func:`run_program` runs it once on one
release, in one child process, and gives one :class:`~casebook.releases.Outcome`
per variant; :func:`program_table` does so on several releases and returns the
:class:`~casebook.releases._expect.VersionTable` the pages print and check, one row per
release and one column per variant. :func:`show` displays a variant's source, so a page
shows the code it ran beside the table it got, one variant per cell.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from casebook.releases._expect import VersionTable, expect, version_table
from casebook.releases._outcome import Outcome
from casebook.releases._runner import run
from casebook.releases._targets import CURRENT, Target
from casebook.releases.program import program_module

_RUN = """
from casebook.releases.program import run_variants
result = run_variants(PROGRAM, PROGRAM_INPUTS)
"""


def split(outcome: Outcome) -> dict[str, Outcome]:
    """The outcome of a program run, as one outcome per variant (``{name: Outcome}``).

    The run itself must have finished (its set-up may not raise); each variant's own
    exception, output and result become that variant's outcome, on the same release.

    Args:
        outcome: the :class:`~casebook.releases.Outcome` of the run, whose result is
            the records of ``casebook.releases.program.run_variants``.

    Returns:
        ``{variant name: Outcome}``, in the program's order.

    Raises:
        ExpectationError: the run itself failed (its set-up raised).
    """
    expect(outcome)
    return {
        name: dataclasses.replace(
            outcome,
            ok=rec["ok"],
            exc_type=rec["exc_type"],
            exc_types=rec["exc_types"],
            message=rec["message"],
            traceback=rec["traceback"],
            frames=rec["frames"],
            stdout=rec["stdout"],
            stderr="",
            result=rec["result"],
        )
        for name, rec in outcome.result.items()
    }


def run_program(
    program: str,
    target: Target = CURRENT,
    *,
    inputs: Mapping[str, Any] | None = None,
    **run_kwargs: Any,
) -> dict[str, Outcome]:
    """Run every variant of ``program`` on ``target`` in one child process.

    Args:
        program: a module of a case folder (``"optax_1210.loops"``) or a
            dotted module name.
        target: the release to run on: a manifest spec, ``"current"`` or a
            :class:`~casebook.releases.PatchedRelease`.
        inputs: JSON values the program reads with
            :func:`casebook.releases.program.inputs`.
        **run_kwargs: passed to :func:`~casebook.releases.run` (``x64=True``,
            ``timeout=``).

    Returns:
        ``{variant name: Outcome}``: each variant's exception, output and result.

    Raises:
        ExpectationError: the program's set-up (its top level) raised.

    Examples:
        ``tests/programs/example.py`` has three variants; one returns, one raises,
        one prints:

        >>> outcomes = run_program("tests.programs.example", inputs={"scale": 3})
        >>> outcomes["returns"].result
        {'value': 6}
        >>> outcomes["raises"].summary
        'ValueError: no such thing'
        >>> outcomes["prints"].stdout
        'hello from the child\\n'
    """
    given = {"PROGRAM": program_module(program), "PROGRAM_INPUTS": dict(inputs or {})}
    return split(run(_RUN, target, inputs=given, **run_kwargs))


def program_table(
    program: str,
    targets: Sequence[Target],
    *,
    inputs: Mapping[str, Any] | None = None,
    **run_kwargs: Any,
) -> VersionTable:
    """Run ``program`` on each of ``targets`` (one child process each, in parallel) and
    tabulate: one row per release, one column per variant.

    Args:
        program: a module of a case folder (``"optax_828.doors"``) or a dotted module name.
        targets: the releases to run on.
        inputs: JSON values the program reads with
            :func:`casebook.releases.program.inputs`.
        **run_kwargs: passed to every :func:`~casebook.releases.run`.

    Returns:
        The :class:`~casebook.releases.VersionTable`; check it with its ``check``.

    Raises:
        ExpectationError: the program's set-up raised on a release.

    Examples:
        >>> table = program_table("tests.programs.example", ["current"])
        >>> table.columns
        ['returns', 'raises', 'prints']
        >>> _ = table.check({"current": {"returns": None, "raises": (ValueError, "no such")}})
    """
    given = {"PROGRAM": program_module(program), "PROGRAM_INPUTS": dict(inputs or {})}
    runs = version_table(_RUN, targets, inputs=given, **run_kwargs)
    per_row = {row: split(runs.outcome(row)) for row in runs.rows}
    columns = list(next(iter(per_row.values())))
    cells = {(row, col): outcomes[col] for row, outcomes in per_row.items() for col in outcomes}
    return VersionTable(columns, [str(t) for t in targets], cells)


@dataclasses.dataclass(frozen=True)
class Source:
    """Source code to show on a page: plain text, and highlighted HTML in a notebook.

    Args:
        code: the source text.

    Examples:
        >>> print(Source("x = 1"))
        x = 1
    """

    code: str

    def __str__(self) -> str:
        return self.code

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(self.code)

    def _repr_html_(self) -> str:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer

        return highlight(self.code, PythonLexer(), HtmlFormatter(noclasses=True, nobackground=True))


def _file(program: str) -> Path:
    spec = importlib.util.find_spec(program_module(program))
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(
            f"no program {program!r} (a case folder's module, or a dotted name)"
        )
    return Path(spec.origin)


def _variant_name(node: ast.AST) -> str | None:
    for deco in getattr(node, "decorator_list", []):
        if (
            isinstance(deco, ast.Call)
            and getattr(deco.func, "id", None) == "variant"
            and deco.args
            and isinstance(deco.args[0], ast.Constant)
        ):
            return str(deco.args[0].value)
    return None


def _span(node: ast.AST, lines: list[str]) -> str:
    decorators = getattr(node, "decorator_list", [])
    start = min([getattr(node, "lineno", 1), *(d.lineno for d in decorators)])
    return "\n".join(lines[start - 1 : getattr(node, "end_lineno", start)])


def show(program: str, *names: str) -> Source:
    """The source of ``program``: with ``names``, of those variants (by variant name) or
    top-level functions, classes or assignments (by name), decorators included; without,
    the set-up: the module without its docstring, imports and variants. Read from the
    file, not imported, since a program is written for an old release.

    Args:
        program: a module of a case folder (``"optax_828.doors"``) or a dotted module name.
        *names: variant names, or names of top-level functions, classes or assigned
            variables, in the order to show them.

    Returns:
        A :class:`Source`: the pieces, one blank line apart; highlighted in a notebook.

    Raises:
        KeyError: ``program`` has nothing of one of ``names``.
        ModuleNotFoundError: there is no such program.

    Examples:
        >>> print(show("tests.programs.example", "returns"))
        @variant("returns")
        def returns() -> dict[str, int]:
            return {"value": 2 * SCALE}
        >>> print(show("tests.programs.example"))
        SCALE = inputs().get("scale", 1)
    """
    text = _file(program).read_text()
    lines = text.splitlines()
    body = ast.parse(text).body
    if not names:
        chosen = [
            node
            for node in body
            if _variant_name(node) is None
            and not isinstance(node, (ast.Import, ast.ImportFrom))
            and not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
        ]
    else:
        chosen = []
        for name in names:
            node = next((n for n in body if name in _names(n)), None)
            if node is None:
                raise KeyError(f"{program} has no variant, function or name {name!r}")
            chosen.append(node)
    return Source("\n\n".join(_span(node, lines) for node in chosen))


def _names(node: ast.AST) -> set[str]:
    """The names a top-level statement defines, and its variant name if it is one."""
    found = {getattr(node, "name", None), _variant_name(node)}
    targets = getattr(node, "targets", None) or [getattr(node, "target", None)]
    for target in targets:
        if target is not None:
            found.update(t.id for t in ast.walk(target) if isinstance(t, ast.Name))
    return {n for n in found if n}

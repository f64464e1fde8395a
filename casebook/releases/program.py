"""What a *program* of the book is: a module of named variants that runs on a release.

Several pages run the same set-up on several releases and try a few things on each: every
loop kind LBFGS's state can meet, every way of writing a mask, both edge cases of a fix.
Such code lives in a module of its case folder (``casebook/cases/KEY/``), linted and type-checked like the
rest, never in a string. Its top level is the set-up; each experiment is a function
without arguments, marked with :func:`variant`::

    from casebook.releases.program import variant

    params = {"w": jnp.ones(2)}

    @variant("lax.scan, fresh")
    def scan_fresh():
        ...
        return {"traces": traces}   # JSON-able; comes back as the cell's result

:func:`run_variants` (called in the child process, on the release) imports the module and
calls each variant in order, recording for each whether it raised, the summary of its
exception, what it printed and what it returned. One failing variant does not stop the
next. :func:`casebook.releases.program_table` runs a program on several releases
and turns the records into a version table, one column per variant.

Standard library only: this module is imported on old releases.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import sys
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from casebook.project import PACKAGE
from casebook.releases._child import exception_record

__all__ = [
    "PROGRAMS_PACKAGE",
    "VARIANT_ATTRIBUTE",
    "inputs",
    "program_module",
    "run_variants",
    "variant",
    "variants_of",
]

VARIANT_ATTRIBUTE = "__casebook_variant__"
"""The attribute :func:`variant` sets on a function, the variant's column name."""

_F = TypeVar("_F", bound=Callable[[], Any])
_INPUTS: dict[str, Any] = {}


def variant(name: str) -> Callable[[_F], _F]:
    """Mark a function without arguments as the variant ``name`` of its program.

    Args:
        name: the variant's name: the column of the version table, the key of
            :func:`~casebook.releases.run_program`'s result.

    Returns:
        A decorator that returns the function unchanged, marked.

    Examples:
        >>> @variant("lax.scan, fresh")
        ... def scan_fresh():
        ...     return {"traces": 1}
        >>> scan_fresh(), getattr(scan_fresh, VARIANT_ATTRIBUTE)
        ({'traces': 1}, 'lax.scan, fresh')
    """

    def mark(function: _F) -> _F:
        setattr(function, VARIANT_ATTRIBUTE, name)
        return function

    return mark


def inputs() -> dict[str, Any]:
    """The inputs the run passed to the program (``program_table(..., inputs={...})``),
    readable at the module's top level, since they are set before it is imported.

    Returns:
        A copy of the inputs, ``{}`` outside a run.

    Examples:
        A program's set-up reads them, with a default for a run that passes none::

            SCALE = inputs().get("scale", 1)

        >>> inputs()
        {}
    """
    return dict(_INPUTS)


def variants_of(module: Any) -> dict[str, Callable[[], Any]]:
    """The variants of a module, ``{name: function}``, in the order they are defined.

    >>> import types
    >>> m = types.ModuleType("m")
    >>> m.f = variant("first")(lambda: 1)
    >>> m.g = lambda: 2
    >>> list(variants_of(m))
    ['first']
    """
    found = {}
    for value in vars(module).values():
        name = getattr(value, VARIANT_ATTRIBUTE, None)
        if callable(value) and isinstance(name, str):
            found[name] = value
    return found


def _record(function: Callable[[], Any]) -> dict[str, Any]:
    """Call one variant: its exception record (or ``ok``), what it printed, its result."""
    out = io.StringIO()
    rec: dict[str, Any] = {"ok": True, "exc_type": None, "exc_types": [], "message": ""}
    rec.update(traceback="", frames=[], result=None)
    try:
        with contextlib.redirect_stdout(out):
            rec["result"] = function()
    except Exception as e:
        rec.update(exception_record(e))
    rec["stdout"] = out.getvalue()
    return rec


PROGRAMS_PACKAGE = "casebook.cases"
"""The package of the programs, one module per program in its case's folder
(``"optax_828.doors"`` is ``casebook.cases.optax_828.doors``)."""


def program_module(program: str) -> str:
    """The dotted module of a program: ``CASE.NAME`` under :data:`PROGRAMS_PACKAGE` where
    ``CASE`` is a case folder, any other dotted name as it is.

    >>> program_module("optax_828.doors"), program_module("tests.programs.example")
    ('casebook.cases.optax_828.doors', 'tests.programs.example')
    """
    folder = program.split(".", 1)[0]
    if "." in program and (PACKAGE / "cases" / folder).is_dir():
        return f"{PROGRAMS_PACKAGE}.{program}"
    return program


def run_variants(module_name: str, given: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Import ``module_name`` (its set-up runs) with ``given`` as its :func:`inputs`, then
    call each of its variants; ``{name: record}``. A failing set-up raises, as any cell.

    Args:
        module_name: the program: ``"optax_828.doors"`` (a case folder's module) or a
            dotted module name (:func:`program_module`).
        given: the values :func:`inputs` returns while the program runs.

    Returns:
        ``{variant name: record}``, each record a dict with ``ok``, ``exc_type``,
        ``exc_types``, ``message``, ``traceback``, ``frames``, ``stdout`` and ``result``.

    Raises:
        LookupError: the module has no variant.

    Examples:
        >>> records = run_variants("tests.programs.example", {"scale": 2})
        >>> records["returns"]["result"], records["raises"]["exc_type"]
        ({'value': 4}, 'ValueError')
    """
    _INPUTS.clear()
    _INPUTS.update(given or {})
    module_name = program_module(module_name)
    sys.modules.pop(module_name, None)
    module = importlib.import_module(module_name)
    variants = variants_of(module)
    if not variants:
        raise LookupError(f"{module_name} defines no @variant functions")
    return {name: _record(function) for name, function in variants.items()}

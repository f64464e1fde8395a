"""The examples in the docstrings run: every module of ``casebook``, one test each.

The API reference page (``book/api.md``) shows these examples, so a docstring whose example
no longer does what it says fails here, under the README's test command. Modules whose
import needs a package that is not installed are skipped; the programs of
the case folders are not imported (they are written for old releases and run in child
processes, where their own pages check them).
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import casebook
from casebook import cases, releases

READS_PAGES = False

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

#: Modules whose examples use historical releases' environments (``python3 -m casebook setup``).
NEEDS_RELEASES = {"casebook.releases._targets": ("optax==0.1.9",)}

MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(casebook.__path__, prefix="casebook.")
    if not cases.is_program(info.name)
)


def _import(name: str):
    """The module itself (``importlib``: ``casebook.releases._expect`` as an attribute is
    the function ``expect``), or a skip when a package it needs is absent."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name and error.name.split(".")[0] == "casebook":
            raise
        pytest.skip(f"{name} needs {error.name}, which is not installed")


def _skip_without_releases(name: str) -> None:
    for spec in NEEDS_RELEASES.get(name, ()):
        try:
            releases.source_file(spec, "")
        except releases.ReleaseError:
            pytest.skip(f"{name}'s examples need {spec}: run `python3 -m casebook setup`")


def test_the_examples_are_found():
    """Guards the finder itself: the modules the API page documents have examples."""
    found = {
        name
        for name in MODULES
        for test in doctest.DocTestFinder().find(_import(name), name)
        if test.examples
    }
    assert {"casebook.check", "casebook.failure", "casebook.trace", "casebook.display"} <= found


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    module = _import(name)
    tests = [t for t in doctest.DocTestFinder().find(module, name) if t.examples]
    if not tests:
        pytest.skip(f"{name} has no examples")
    _skip_without_releases(name)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    for test in tests:
        runner.run(test)
    results = runner.summarize(verbose=False)
    assert results.failed == 0, f"{results.failed} of {results.attempted} examples of {name} failed"

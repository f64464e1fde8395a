"""The lessons page depends on every family of ``check_optimizer``.

The page shows each family on a case and asserts what the check reports; with a family
switched off (``CASEBOOK_CHECK_OFF``, which drops its findings from every report, read at
each call), some cell of the page must fail. The page runs once, top to bottom, in one
kernel; then, for each family in turn, the switch is set in that kernel and the cells from
the first ``check_optimizer`` call on run again, until one fails. That first run is the
page's test in the test command (:data:`casebook.tools.suite.ONCE_ELSEWHERE`: nbmake does
not run the page again), so nothing runs twice.
"""

from __future__ import annotations

import typing

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from casebook.check._check import SWITCH_OFF_ENV
from casebook.check._report import Family
from casebook.project import ROOT

PAGE = ROOT / "book" / "lessons.ipynb"
FAMILIES = typing.get_args(Family)


def _switch(client: NotebookClient, family: str | None) -> None:
    code = (
        f"import os; os.environ[{SWITCH_OFF_ENV!r}] = {family!r}"
        if family
        else f"import os; os.environ.pop({SWITCH_OFF_ENV!r}, None)"
    )
    client.execute_cell(nbformat.v4.new_code_cell(code), 0)


PAGE_RUN = "the page as it is"
"""The key under which :func:`failing` records the first failure of the page's own run."""


@pytest.fixture(scope="module")
def failing() -> dict[str, str]:
    """The first cell that failed in the page's own run, top to bottom (under
    :data:`PAGE_RUN`, absent when every cell passed); then, if it passed, for each family the
    first cell that failed with it switched off (its error's first line)."""
    nb = nbformat.read(PAGE, as_version=4)
    client = NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(PAGE.parent)}}
    )
    code = [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    first = next(n for n, (_, c) in enumerate(code) if "check_optimizer(" in c.source)
    found: dict[str, str] = {}
    with client.setup_kernel():
        for family, cells in ((None, code), *((f, code[first:]) for f in FAMILIES)):
            _switch(client, family)
            for i, cell in cells:
                try:
                    client.execute_cell(cell, i)
                except CellExecutionError as error:
                    found[family or PAGE_RUN] = f"cell {i}: " + str(error).strip().splitlines()[-1]
                    break
            if PAGE_RUN in found:
                break
        _switch(client, None)
    return found


def test_the_lessons_page_runs_top_to_bottom(failing):
    """The page's own test in the test command: every cell passes, in order, in one kernel."""
    assert PAGE_RUN not in failing, f"the lessons page failed at {failing[PAGE_RUN]}"


@pytest.mark.parametrize("family", FAMILIES)
def test_the_lessons_page_fails_without_each_family(failing, family):
    assert PAGE_RUN not in failing, (
        "the page itself fails: see test_the_lessons_page_runs_top_to_bottom"
    )
    assert family in failing, f"the lessons page passed with {family!r} switched off"
    assert "Error" in failing[family], failing[family]

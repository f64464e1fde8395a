"""The lessons page proves each family of ``check_optimizer`` on its own cells.

The page tags each cell that asserts what the check finds of a family ``detects-KEY``
(``KEY``: the family's key in ``casebook/check/families.toml``, or ``crash``). The page runs
once, top to bottom, in one kernel; then, for each family in turn, the switch
(``CASEBOOK_CHECK_OFF``, which drops the family's findings from every report, read at each
call) is set in that kernel and every cell from the first ``check_optimizer`` call on runs
again. With a family off, the cells that fail must be exactly the family's own, each on an
``assert`` line: a page that stops asserting a family's detections fails that family's test,
even where some other cell happens to fail without the family. That first run is the page's
test in the test command (:data:`casebook.maintainer.tools.suite.ONCE_ELSEWHERE`: nbmake does not run
the page again), so nothing runs twice.
"""

from __future__ import annotations

import copy
import os
import re
import tomllib
import typing

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from casebook.check._check import SWITCH_OFF_ENV
from casebook.check._report import FAMILIES_FILE, Family
from casebook.maintainer.tools import buildcache, suite
from casebook.project import ROOT

READS_PAGES = ("book/lessons.ipynb",)

PAGE = ROOT / "book" / "lessons.ipynb"
FAMILIES = typing.get_args(Family)
KEYS = {"crash": "crash"} | {
    row["check_family"]: row["key"]
    for row in tomllib.loads(FAMILIES_FILE.read_text())["family"]
    if row["check_family"]
}
"""The tag's key of each family the check names (its ``Finding.family``)."""


def _switch(client: NotebookClient, family: str | None) -> None:
    code = (
        f"import os; os.environ[{SWITCH_OFF_ENV!r}] = {family!r}"
        if family
        else f"import os; os.environ.pop({SWITCH_OFF_ENV!r}, None)"
    )
    client.execute_cell(nbformat.v4.new_code_cell(code), 0)


def _failure(error: CellExecutionError) -> str:
    """``'AssertionError at: assert ...'``: the error's name and the line that raised it."""
    lines = re.sub(r"\x1b\[[0-9;]*m", "", error.traceback).splitlines()
    raised = [line.split("---->", 1)[1].strip() for line in lines if "---->" in line]
    return f"{error.ename} at: {raised[-1].split(' ', 1)[-1] if raised else '?'}"


PAGE_RUN = "the page as it is"
"""The key under which :func:`failing` records the first failure of the page's own run."""


@pytest.fixture(scope="module")
def failing() -> dict[str, dict[int, str]]:
    """The first cell that failed in the page's own run, top to bottom (under
    :data:`PAGE_RUN`, absent when every cell passed); then, if it passed, for each family
    every cell that failed with it switched off (cell index: :func:`_failure`)."""
    nb = nbformat.read(PAGE, as_version=4)
    client = NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(PAGE.parent)}}
    )
    code = [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    first = next(n for n, (_, c) in enumerate(code) if "check_optimizer(" in c.source)
    found: dict[str, dict[int, str]] = {}
    digest = buildcache.page_digest(ROOT, PAGE)  # what the run reads, taken before it
    with client.setup_kernel():
        for family, cells in ((None, code), *((f, code[first:]) for f in FAMILIES)):
            _switch(client, family)
            failed = found.setdefault(family or PAGE_RUN, {})
            for i, cell in cells:
                try:
                    client.execute_cell(cell, i)
                except CellExecutionError as error:
                    failed[i] = _failure(error)
                    if family is None:
                        return found
            if family is None:
                del found[PAGE_RUN]  # every cell passed
                if os.environ.get(suite.LOCK_ENV):  # recorded, so the book build reuses it
                    ran = copy.deepcopy(nb)  # nbclient put the switch's cell at index 0
                    ran.cells[0] = nbformat.read(PAGE, as_version=4).cells[0]
                    assert buildcache.store_executed(ROOT, PAGE, ran, digest=digest)
        _switch(client, None)
    return found


def test_the_lessons_page_runs_top_to_bottom(failing):
    """The page's own test in the test command: every cell passes, in order, in one kernel."""
    assert PAGE_RUN not in failing, f"the lessons page failed at {failing[PAGE_RUN]}"


@pytest.mark.parametrize("family", FAMILIES)
def test_the_lessons_page_fails_on_the_family_s_own_cells_without_it(failing, family):
    assert PAGE_RUN not in failing, (
        "the page itself fails: see test_the_lessons_page_runs_top_to_bottom"
    )
    tag = f"detects-{KEYS[family]}"
    cells = nbformat.read(PAGE, as_version=4).cells
    own = {i for i, c in enumerate(cells) if tag in c.get("metadata", {}).get("tags", [])}
    assert own, f"no cell of the lessons page is tagged {tag}"
    failed = failing[family]
    assert set(failed) == own, (
        f"with {family!r} switched off, cells {sorted(failed)} failed; the family's own "
        f"(tagged {tag}) are {sorted(own)}: {failed}"
    )
    for i, error in failed.items():
        assert error.startswith("AssertionError at: assert "), f"cell {i}: {error}"

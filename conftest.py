"""Pytest wiring of the test command: benchmark cells time alone (:mod:`casebook.tools.suite`).

Every unit test holds the suite lock shared for its whole run, set-up and tear-down of its
fixtures included (a module's fixture that builds HTML or fetches wheels is work too); every
cell of a page (run by nbmake through nbclient) holds it shared, or exclusively if the cell
is tagged ``benchmark``. The lock is off unless ``CASEBOOK_SUITE_LOCK`` is set, as the test
command does. Under the test command, every page that passes is also stored in the book's
execution cache (:func:`casebook.tools.buildcache.store_executed`), so the book build after
the tests reuses its outputs, and the run's warm release servers, which every worker and
kernel shared, are stopped when it ends.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from nbmake.nb_run import NotebookRun

from casebook.project import ROOT
from casebook.tools import buildcache, suite


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """A unit test shares the machine from its first fixture to its last tear-down. A page
    (an nbmake item) is left to its cells, which take the lock one by one."""
    if isinstance(item, pytest.Function):
        with suite.shared():
            yield
    else:
        yield


suite.lock_cells()


_run_page = NotebookRun.execute


@functools.wraps(_run_page)
def _run_page_and_keep_it(self: NotebookRun) -> Any:
    """Under the test command, a page that ran without an error goes into the book's
    execution cache, so ``python3 -m casebook book`` after the tests executes nothing."""
    result = _run_page(self)
    if result.error is None and os.environ.get(suite.LOCK_ENV):
        buildcache.store_executed(ROOT, Path(self.filename), result.nb)
    return result


NotebookRun.execute = _run_page_and_keep_it  # type: ignore[method-assign]


def pytest_unconfigure(config: pytest.Config) -> None:
    """Under the test command, the main process stops the run's pool of warm servers
    (``CASEBOOK_POOL``, a folder of the run's own): they would otherwise idle on."""
    if os.environ.get(suite.LOCK_ENV) and not hasattr(config, "workerinput"):
        from casebook.releases import _pool

        _pool.shutdown()

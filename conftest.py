"""Pytest wiring of the test command: benchmark cells time alone (:mod:`casebook.tools.suite`).

Every unit test holds the suite lock shared; every cell of a page (run by nbmake through
nbclient) holds it shared, or exclusively if the cell is tagged ``benchmark``. The lock is
off unless ``CASEBOOK_SUITE_LOCK`` is set, as the test command does.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import pytest
from nbclient import NotebookClient

from casebook.tools import suite


@pytest.fixture(autouse=True)
def _shares_the_machine() -> Iterator[None]:
    with suite.shared():
        yield


_execute_cell = NotebookClient.async_execute_cell


@functools.wraps(_execute_cell)
async def _execute_cell_under_the_lock(
    self: NotebookClient, cell: Any, *args: Any, **kwargs: Any
) -> Any:
    tags = cell.get("metadata", {}).get("tags", [])
    hold = suite.exclusive if suite.BENCHMARK_TAG in tags else suite.shared
    with hold():
        return await _execute_cell(self, cell, *args, **kwargs)


NotebookClient.async_execute_cell = _execute_cell_under_the_lock  # type: ignore[method-assign]

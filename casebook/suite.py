"""Benchmarks time alone, even in a parallel test suite: a readers-writer lock per run.

The test command runs pages and unit tests on several pytest-xdist workers at once. Most
work can share the CPU; a benchmark cannot, since another process's compile would land in
its samples (on a two-core machine, an A/A control then reads far from 1.0). So when
``CASEBOOK_SUITE_LOCK`` names a file (the test command sets it), every test and every
page cell holds that file's lock *shared* while it runs, and a cell tagged ``benchmark``
holds it *exclusively*: it waits for the running work of the other workers to end, and
no other work starts until it is done. Outside the test command (a reader's Jupyter,
Colab, ``pytest`` by hand) the lock is off and nothing waits.

Standard library only (``fcntl``: POSIX). The wiring is the repository's ``conftest.py``.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator

__all__ = ["BENCHMARK_TAG", "LOCK_ENV", "exclusive", "held", "shared"]

LOCK_ENV = "CASEBOOK_SUITE_LOCK"
"""The variable that names the suite's lock file; unset, the lock is off."""

BENCHMARK_TAG = "benchmark"
"""The cell tag of a page's timing cells: they run with the lock held exclusively."""


@contextlib.contextmanager
def held(mode: int) -> Iterator[None]:
    """Hold the suite's lock in ``mode`` (``fcntl.LOCK_SH`` or ``LOCK_EX``) while the
    block runs; a no-op when ``CASEBOOK_SUITE_LOCK`` is unset."""
    path = os.environ.get(LOCK_ENV)
    if not path:
        yield
        return
    with open(path, "a") as f:
        fcntl.flock(f, mode)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def shared() -> contextlib.AbstractContextManager[None]:
    """Ordinary work: runs beside other ordinary work, never beside a benchmark."""
    return held(fcntl.LOCK_SH)


def exclusive() -> contextlib.AbstractContextManager[None]:
    """A benchmark: runs alone."""
    return held(fcntl.LOCK_EX)

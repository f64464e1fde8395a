"""Benchmarks time alone, even in a parallel test suite: a readers-writer lock per run.

The test command runs pages and unit tests on several pytest-xdist workers at once. Most
work can share the CPU; a benchmark cannot, since another process's compile would land in
its samples (on a two-core machine, an A/A control then reads far from 1.0). So when
``CASEBOOK_SUITE_LOCK`` names a file (the test command sets it), every test and every
page cell holds that file's lock *shared* while it runs, and a cell tagged ``benchmark``
holds it *exclusively*: it waits for the running work of the other workers to end, and
no other work starts until it is done. Outside the test command (a reader's Jupyter,
Colab, ``pytest`` by hand) the lock is off and nothing waits.

Standard library only (``fcntl``: POSIX), and nbclient for :func:`lock_cells`. The wiring
is the repository's ``conftest.py`` and the book's parallel execution
(:mod:`casebook.maintainer.tools.prebuild`), both through :func:`lock_cells`.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from casebook import storage
from casebook.maintainer.tools import buildcache, environment
from casebook.project import ROOT
from casebook.runenv import QUIET_MALLOC

__all__ = [
    "BENCHMARK_TAG",
    "LOCK_ENV",
    "ONCE_ELSEWHERE",
    "PARALLEL",
    "TEST_ARGS",
    "exclusive",
    "held",
    "lock_cells",
    "remove_killed_runs",
    "run_tests",
    "shared",
    "test",
]

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


def lock_cells() -> None:
    """Make every notebook cell nbclient runs in this process hold the lock: shared, or
    exclusively if tagged ``benchmark`` (idempotent; the lock is off while
    ``CASEBOOK_SUITE_LOCK`` is unset)."""
    import functools

    from nbclient import NotebookClient

    execute_cell = NotebookClient.async_execute_cell
    if getattr(execute_cell, "_casebook_locked", False):
        return

    @functools.wraps(execute_cell)
    async def under_the_lock(self: NotebookClient, cell: Any, *args: Any, **kwargs: Any) -> Any:
        tags = cell.get("metadata", {}).get("tags", [])
        with (exclusive if BENCHMARK_TAG in tags else shared)():
            return await execute_cell(self, cell, *args, **kwargs)

    under_the_lock._casebook_locked = True  # type: ignore[attr-defined]
    NotebookClient.async_execute_cell = under_the_lock  # type: ignore[method-assign]


# ------------------------------------------------------------------- the test command

PARALLEL = [
    *("-n", "auto", "--maxprocesses", "4"),
    *("--dist", "loadfile", "--no-loadscope-reorder"),
]
"""pytest-xdist: one worker per core, at most four (each holds jax and warm servers), handed
a file at a time, in the order given. With ``--dist load`` the first worker got the first
154 items of 1,238 at once, the ten pages among them: it ran every page, 452 s of work
against the other's 322 s, which then sat idle for the last 97 s. A file at a time, each
page goes to whichever worker is free, and a module's fixtures (the browser tests' site
build) are built once; in the order given, the pages (a file of one item each, which
xdist's reorder by size would send last) go first, and the last to end are small files.

Three workers on 2 cores (fresh clones, 2026-11-29) idled the cores 10 % of a run, not 24 %,
but took 624 s against 650, 206 s against 207 after a page edit, 28 s against 16 unchanged:
no more than the spread."""

ONCE_ELSEWHERE = ["book/lessons.ipynb::lessons.ipynb"]
"""Pages whose whole run is already a test of ``tests/``, so nbmake does not run them a
second time: ``tests/test_lessons_families.py`` runs the lessons page top to bottom in one
kernel (its first test) before it switches each family off in that kernel."""

TEST_ARGS = [
    *PARALLEL,
    "--nbmake",
    *(f"--deselect={item}" for item in ONCE_ELSEWHERE),
    *("notebooks/", "book/", "tests/"),
]
"""What the test command hands to pytest (after set-up) when no paths are given."""


def compile_cache() -> dict[str, str]:
    """jax's persistent compilation cache for every process of a test run on today's stack
    (page kernels, the card's fresh-process programs, exercise checks, the board's
    triggers, warm release runs): one folder, kept between local runs beside the fetched
    wheels, each compile stored however short. An XLA program is compiled once, by the
    first process that needs it. An era's run does not get it
    (``casebook.releases._pool.READER_CACHE_ENV``); the Colab simulation starts its
    own processes, cold; ``bench.compile_seconds`` and the bench programs turn it off for
    what they time."""
    from casebook.releases._envs import cache_dir

    return {
        "JAX_COMPILATION_CACHE_DIR": str(cache_dir() / "compile-cache"),
        "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
    }


def remove_killed_runs() -> list[Path]:
    """Remove what killed runs left in the temp folder (``casebook.storage.leftovers``): a
    killed process's warm servers end by themselves, its folders stay; the folders removed."""
    return storage.remove_leftovers()


def run_tests(py: str | Path, args: list[str], extra: dict[str, str] | None = None) -> None:
    """``pytest ARGS`` with the suite lock on (benchmark cells time alone while the rest
    runs in parallel). First it removes what killed runs left in the temp folder
    (:func:`remove_killed_runs`)."""
    gone = remove_killed_runs()
    if gone:
        print(f"casebook test: removed {len(gone)} folder(s) that killed runs left behind")
    with storage.owned_tempdir("suite") as tmp:
        # Quiet malloc everywhere: a page's in-kernel benchmark then reuses its buffers
        # instead of first-touching fresh pages, whose cost varies with what the rest of
        # the suite does to the machine's memory.
        env = {
            **os.environ,
            **QUIET_MALLOC,
            LOCK_ENV: str(Path(tmp) / "suite.lock"),
            **compile_cache(),
            **(extra or {}),
        }
        environment.sh([py, "-m", "pytest", *args], cwd=ROOT, env=env)


DURATIONS = ROOT / "tests" / "durations.json"
"""Each test's seconds in a full run (pytest-split's format), which ``--shard`` balances the
shards by; a test it lacks counts as the average. Written from a run's junit report by
``python -m casebook.maintainer.tools.suite --durations REPORT``."""


def pytest_args(args: list[str]) -> tuple[list[str], dict[str, str]]:
    """The pytest arguments and the variables of ``python3 -m casebook test ARGS``: the
    whole suite (:data:`TEST_ARGS`) unless a path is given; ``--fresh`` proves every page
    again (no records, :mod:`casebook.maintainer.tools.buildcache`); ``--shard K/N`` runs the K-th of
    N disjoint parts of what is collected, balanced by :data:`DURATIONS` (pytest-split);
    any other option goes to pytest."""
    env = {buildcache.FRESH_ENV: "1"} if "--fresh" in args else {}
    rest = [a for a in args if a != "--fresh"]
    if "--shard" in rest:
        at = rest.index("--shard")
        k, n = rest[at + 1].split("/")
        split = ["--splits", n, "--group", k, "--splitting-algorithm", "least_duration"]
        rest[at : at + 2] = [*split, "--durations-path", str(DURATIONS)]
    paths = any(Path(a.split("::")[0]).exists() for a in rest if not a.startswith("-"))
    return ([*PARALLEL, "--nbmake", *rest] if paths else [*TEST_ARGS, *rest]), env


def write_durations(report: Path) -> None:
    """:data:`DURATIONS` from a junit report of a full run (``--junitxml``): each test's
    node id and seconds, the pages as pytest-split names them."""
    import json
    import xml.etree.ElementTree as ET

    seconds: dict[str, float] = {}
    for case in ET.parse(report).iter("testcase"):
        path = case.get("classname", "").replace(".", "/")
        node = case.get("name", "")
        if path.endswith(("/ipynb", "ipynb")) or node.endswith(".ipynb"):
            nodeid = f"{path.removesuffix('/ipynb')}.ipynb::{node}"
        else:
            nodeid = f"{path}.py::{node}"
        seconds[nodeid] = round(seconds.get(nodeid, 0.0) + float(case.get("time", 0)), 2)
    DURATIONS.write_text(json.dumps(dict(sorted(seconds.items())), indent=1) + "\n")


NO_BROWSER = (
    "casebook test: chromium not found, so the browser tests (tests/test_browser.py: the "
    "first screen of each case page, the search) are skipped; install Debian's chromium "
    "(`apt-get install chromium`) to run them"
)


def test(args: list[str], gpu: bool = False) -> None:
    """``python3 -m casebook test [--fresh] [--shard K/N] [PATH ...]``: set up, then every
    page and unit test (or ``PATH``s) under pytest, in parallel (:func:`pytest_args`).
    Without chromium it says, first and last, that the browser tests skip."""
    py = environment.setup(gpu)
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        print(NO_BROWSER)
    pytest, env = pytest_args(args)
    try:
        run_tests(py, pytest, env)
    finally:
        if not browser:
            print(NO_BROWSER)


if __name__ == "__main__":
    import sys

    write_durations(Path(sys.argv[sys.argv.index("--durations") + 1]))

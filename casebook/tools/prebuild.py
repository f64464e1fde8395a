"""The book's pages executed in parallel before Jupyter Book reads them.

Jupyter Book executes the pages one after the other, so a clean build of the book takes as
long as all its pages in a row. ``python3 -m casebook book`` first runs this module in the
book's venv: every executed page that the execution cache lacks is run by one of
:data:`WORKERS` processes, with the same lock as the test command (benchmark cells time
alone, :func:`casebook.tools.suite.lock_cells`) and quiet malloc, and stored in the cache
(:func:`casebook.tools.buildcache.store_executed`). Jupyter Book then finds every page in
the cache and executes none; a page that failed here is left out of the cache, so the
build executes it again and fails on it with its own error. A clean build still executes
every page: nothing is reused that its record's digest of its inputs does not vouch for
(:mod:`casebook.tools.buildcache`).
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import sys
import time
from pathlib import Path

from casebook import storage
from casebook.project import ROOT
from casebook.runenv import QUIET_MALLOC
from casebook.tools import buildcache, colab, executor, suite

__all__ = ["WORKERS", "execute_missing", "main", "missing"]

WORKERS = 2
"""Pages run at once (one per core of the machine the figures were measured on)."""

TIMEOUT = 300
"""Seconds a cell may take (``_config.yml``: ``execute.timeout``)."""


def missing(root: Path = ROOT) -> list[Path]:
    """The executed pages whose current code the execution cache has no outputs for."""
    import nbformat
    from jupyter_cache import get_cache

    cache = get_cache(str(root / "_build" / buildcache.JUPYTER_CACHE))
    out = []
    for page in colab.pages(root):
        try:
            cache.match_cache_notebook(nbformat.read(page, as_version=4))
        except KeyError:
            out.append(page)
    return out


def _execute(page: Path, root: Path) -> tuple[str, bool, float, str]:
    """Run ``page`` (the one executor) and store its outputs in the build's cache if it
    passed; ``(page, passed, seconds, the failing cell's error)``."""
    suite.lock_cells()
    digest = buildcache.page_digest(root, page)  # what the run reads, taken before it
    run = executor.execute(page, timeout=TIMEOUT)
    if not run.passed:  # the build runs the page again and reports it
        return page.name, False, run.seconds, run.errors[0].error[-300:]
    buildcache.store_executed(root, page, run.notebook, digest=digest)
    return page.name, True, run.seconds, ""


def execute_missing(
    root: Path = ROOT, workers: int = WORKERS
) -> list[tuple[str, bool, float, str]]:
    """Run every page the cache lacks, ``workers`` at a time, and store each that passes;
    ``(page, passed, seconds, error)`` for each, in the order they finished."""
    for page in buildcache.invalidate_if_stale(root):  # records of older inputs go first
        print(f"casebook: {page}: its inputs changed since its record; it runs again")
    pages = missing(root)
    if not pages:
        return []
    with storage.owned_tempdir("book") as tmp:
        lock = os.environ.get(suite.LOCK_ENV) or str(Path(tmp) / "book.lock")
        spawn = multiprocessing.get_context("spawn")  # fresh workers: no inherited cache handle
        with concurrent.futures.ProcessPoolExecutor(
            max_workers=workers, mp_context=spawn, initializer=_prepare, initargs=(lock,)
        ) as pool:
            futures = [pool.submit(_execute, page, root) for page in pages]
            return [f.result() for f in concurrent.futures.as_completed(futures)]


def _prepare(lock: str) -> None:
    """A worker's environment, which its kernels inherit: the lock, quiet malloc."""
    os.environ[suite.LOCK_ENV] = lock
    os.environ.update(QUIET_MALLOC)


def main(argv: list[str]) -> int:
    """``python -m casebook.tools.prebuild``: run the pages the cache lacks; always 0 (the
    build reports a page that fails). With ``--built`` (after the build): record what the
    build executed itself (:func:`casebook.tools.buildcache.record_built`)."""
    if argv == ["--built"]:
        buildcache.record_built(ROOT)
        return 0
    t0 = time.perf_counter()
    results = execute_missing()
    for name, passed, seconds, error in results:
        print(
            f"casebook: {'ran' if passed else 'FAILED'} {name} in {seconds:.0f} s {error}".rstrip()
        )
    print(
        f"casebook: {len(results)} page(s) executed, {WORKERS} at a time, in {time.perf_counter() - t0:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

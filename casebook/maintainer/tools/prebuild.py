"""The book's pages executed in parallel before Jupyter Book reads them.

Jupyter Book executes the pages one after the other, so a clean build of the book takes as
long as all its pages in a row. ``python3 -m casebook book`` first runs this module in the
book's venv: every executed page that the execution cache lacks is run by jupyter-cache's
own parallel executor (``local-parallel``, a process per core; the one Jupyter Book runs
serially), with the same lock as the test command (benchmark cells time alone,
:func:`casebook.maintainer.tools.suite.lock_cells`, inherited by the forked workers) and quiet malloc,
the kernels' own standard error kept out of the output (a failing page's traceback is
printed from the cache's record);
it stores each page that passes in the cache, and the digest of the inputs the run read,
taken before it (:func:`casebook.maintainer.tools.buildcache.record_inputs`). Jupyter Book then finds
every page in the cache and executes none; a page that failed here is left out of the
cache, so the build executes it again and fails on it with its own error. A clean build
still executes every page: nothing is reused that its record's digest of its inputs does
not vouch for (:mod:`casebook.maintainer.tools.buildcache`).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from unittest import mock

from casebook import storage
from casebook.maintainer.tools import buildcache, colab, suite
from casebook.project import ROOT
from casebook.runenv import QUIET_MALLOC

__all__ = ["TIMEOUT", "execute_missing", "main", "missing"]

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


def execute_missing(root: Path = ROOT) -> tuple[list[str], dict[str, str]]:
    """Run every page the cache lacks and store each that passes: ``(passed, failed)``,
    the pages that passed and the failing pages' tracebacks."""
    from jupyter_cache import get_cache
    from jupyter_cache.executors import load_executor

    for name in buildcache.invalidate_if_stale(root):  # records of older inputs go first
        print(f"casebook: {name}: its inputs changed since its record; it runs again")
    pages = missing(root)
    if not pages:
        return [], {}
    cache = get_cache(str(root / "_build" / buildcache.JUPYTER_CACHE))
    digests = {page: buildcache.page_digest(root, page) for page in pages}  # before the runs
    for page in pages:
        cache.add_nb_to_project(str(page))
    suite.lock_cells()
    with storage.owned_tempdir("book") as tmp, open(Path(tmp) / "kernels.err", "w") as err:
        lock = os.environ.get(suite.LOCK_ENV) or str(Path(tmp) / "book.lock")
        # The kernels inherit the environment (unittest.mock puts it back afterwards) and
        # file descriptor 2: what XLA's C++ logs write there, below Python, goes to a file.
        terminal = os.dup(2)
        os.dup2(err.fileno(), 2)
        try:
            with mock.patch.dict(os.environ, {suite.LOCK_ENV: lock, **QUIET_MALLOC}):
                result = load_executor("local-parallel", cache).run_and_cache(
                    filter_uris=[str(p) for p in pages], timeout=TIMEOUT
                )
        finally:
            os.dup2(terminal, 2)
            os.close(terminal)
    buildcache.record_inputs(root, {Path(uri): digests[Path(uri)] for uri in result.succeeded})
    failed = [*result.excepted, *result.errored]
    return result.succeeded, {uri: cache.get_project_record(uri).traceback or "" for uri in failed}


def main(argv: list[str]) -> int:
    """``python -m casebook.maintainer.tools.prebuild``: run the pages the cache lacks; always 0 (the
    build reports a page that fails). With ``--built`` (after the build): record what the
    build executed itself (:func:`casebook.maintainer.tools.buildcache.record_built`)."""
    if argv == ["--built"]:
        buildcache.record_built(ROOT)
        return 0
    t0 = time.perf_counter()
    passed, failed = execute_missing()
    for uri, error in failed.items():
        print(f"casebook: FAILED {Path(uri).name}: {error.strip()[-300:]}")
    print(
        f"casebook: {len(passed) + len(failed)} page(s) executed, {os.cpu_count()} at a time, "
        f"in {time.perf_counter() - t0:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

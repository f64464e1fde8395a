"""``python3 -m casebook book``: set up, then build the HTML with warnings as errors.

Execution is cached (jupyter-cache), page by page: a page's record is dropped when anything
its run read changed (:mod:`casebook.maintainer.tools.buildcache`), so the book never shows the outputs
of older code. The pages the cache lacks are then run in parallel by jupyter-cache's
executor (:mod:`casebook.maintainer.tools.prebuild`) and stored, so Jupyter Book, which runs them one
after the other, finds them all; what it executes itself is recorded after the build (the
one page it always executes, ``book/how-to-read.md``, a MyST page the pre-build does not
run); it gets a kernel over TCP, and ipykernel's warning about that is kept out of the
output (:data:`KERNEL_CHATTER`). Standard library only.
"""

from __future__ import annotations

import time

from casebook.maintainer.tools import environment
from casebook.project import ROOT

__all__ = ["KERNEL_CHATTER", "build"]

KERNEL_CHATTER = "Kernel is running over TCP without encryption"
"""The start of ipykernel's warning for a kernel whose sockets are TCP ports, which
jupyter-cache's executor gives its kernels: on a local build it asks nothing of the user,
who would read it as a security problem. The pre-build keeps its kernels' standard error
out of the output, so only the build's own kernels print it."""


def build(gpu: bool = False) -> None:
    """Build ``_build/html`` from the pages (``--warningiserror --nitpick``), then each
    translation into ``_build/html/LANG/`` from the same execution cache
    (:mod:`casebook.maintainer.tools.i18n`)."""
    py = environment.setup(gpu)
    t0 = time.perf_counter()
    environment.sh(
        [py, "-m", "casebook.maintainer.tools.prebuild"], cwd=ROOT
    )  # the pages, in parallel
    environment.sh(
        [
            py.parent / "jupyter-book",
            "build",
            ROOT,
            "--builder",
            "html",
            "--warningiserror",
            "--nitpick",
            "--keep-going",
        ],
        drop=KERNEL_CHATTER,
        cwd=ROOT,
    )
    environment.sh([py, "-m", "casebook.maintainer.tools.prebuild", "--built"], cwd=ROOT)
    english = time.perf_counter() - t0
    environment.sh(
        [py, "-m", "casebook.maintainer.tools.i18n", "html"], drop=KERNEL_CHATTER, cwd=ROOT
    )
    index = ROOT / "_build" / "html" / "index.html"
    total = time.perf_counter() - t0
    print(
        f"casebook: book built in {total:.0f} s (English {english:.0f} s, the translations "
        f"{total - english:.0f} s, in _build/html/LANG/); open {index}"
    )

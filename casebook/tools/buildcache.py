"""Keep the book's execution cache honest.

jupyter-cache re-executes a notebook only when its *code cells* change, and Sphinx re-reads
a page only when its *source file* changes. A notebook's output also depends on code it
imports (``casebook/``), on the historical wheels it runs (``casebook/releases/manifest.toml``), on the era
stacks (each case folder's ``case.toml`` and ``era.txt``), on
the stack (``requirements.txt``, ``pyproject.toml``) and on the stored runs it shows
(``book/measurements/``). :func:`invalidate_if_stale` hashes those
inputs and, when the hash differs from the one stored with the cache, deletes the executed
notebooks and Sphinx's environment, so the next build executes and re-reads every page.

The test command executes every page too. :func:`store_executed` puts each page it ran
without an error into the same cache (the test command's conftest calls it), under the
same digest, so a book build right after the tests executes nothing; a build after any
input changed still executes everything.

Standard library only: it runs before the build, from ``python3 -m casebook book``
(:func:`store_executed` imports nbformat and jupyter-cache, which the test run has).
"""

from __future__ import annotations

import fcntl
import hashlib
import shutil
from pathlib import Path
from typing import Any

#: What a cached notebook output depends on besides its own code, relative to the repo root.
INPUTS = (
    "casebook/**/*.py",
    "casebook/releases/manifest.toml",
    "casebook/cases/*/case.toml",  # each case's issue and era
    "casebook/cases/*/era.txt",  # each era's lock
    "requirements.txt",
    "pyproject.toml",
    "book/measurements/**/*.json",  # stored runs the pages show
)
#: What the build keeps between runs that holds executed outputs (relative to ``_build``).
CACHES = (".jupyter_cache", "jupyter_execute", ".doctrees")
STAMP = ".casebook-inputs.sha256"


def inputs_digest(root: Path) -> str:
    """One sha256 over the path and bytes of every input file, in a fixed order."""
    digest = hashlib.sha256()
    files = sorted({p for pattern in INPUTS for p in root.glob(pattern) if p.is_file()})
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def invalidate_if_stale(root: Path, build: Path | None = None) -> bool:
    """Delete the executed-notebook caches under ``build`` when the inputs changed.

    Returns whether it deleted anything (``False`` on a first build and when nothing
    changed). The new digest is written either way.
    """
    build = build or root / "_build"
    stamp = build / STAMP
    digest = inputs_digest(root)
    stale = stamp.exists() and stamp.read_text().strip() != digest
    if stale or not stamp.exists():
        for name in CACHES:
            shutil.rmtree(build / name, ignore_errors=True)
    build.mkdir(parents=True, exist_ok=True)
    stamp.write_text(digest + "\n")
    return stale


JUPYTER_CACHE = ".jupyter_cache"
"""The execution cache Jupyter Book reads (``_config.yml``: ``execute.cache: ""``)."""


def store_executed(root: Path, source: Path, executed: Any, build: Path | None = None) -> bool:
    """Put ``executed`` (the notebook ``source`` as the test run executed it) into the
    book's execution cache, so that the build reuses its outputs; whether it did.

    The cached notebook is ``source`` as read from disk with the executed cells' outputs
    and counts, so its key is the one the build computes (the runner's per-cell timing
    metadata left out). The digest of :data:`INPUTS` is checked first, under a lock
    shared by the test workers: a cache of older inputs is emptied before this one is
    added.
    """
    import nbformat
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    build = build or root / "_build"
    build.mkdir(parents=True, exist_ok=True)
    notebook = nbformat.read(source, as_version=4)
    code = [c for c in notebook.cells if c.cell_type == "code"]
    ran = [c for c in executed.cells if c.cell_type == "code"]
    if len(code) != len(ran) or any(c.source != r.source for c, r in zip(code, ran, strict=True)):
        return False
    for cell, result in zip(code, ran, strict=True):
        cell.outputs, cell.execution_count = result.outputs, result.execution_count
    with (build / ".casebook-cache.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        invalidate_if_stale(root, build)
        bundle = CacheBundleIn(notebook, str(source), data={"stored_by": "the test command"})
        get_cache(str(build / JUPYTER_CACHE)).cache_notebook_bundle(
            bundle, check_validity=False, overwrite=True
        )
    return True

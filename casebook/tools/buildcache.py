"""Keep the book's execution cache honest.

jupyter-cache re-executes a notebook only when its *code cells* change, and Sphinx re-reads
a page only when its *source file* changes. A notebook's output also depends on code it
imports (``casebook/``), on the historical wheels it runs (``casebook/releases/manifest.toml``), on the era
stacks (each case folder's ``case.toml`` and ``era.txt``), on
the stack (``requirements.txt``, ``pyproject.toml``) and on the stored runs it shows
(``book/measurements/``). :func:`invalidate_if_stale` hashes those
inputs and, when the hash differs from the one stored with the cache, deletes the executed
notebooks and Sphinx's environment, so the next build executes and re-reads every page.
Standard library only: it runs before the build, from ``python3 -m casebook book``.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

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

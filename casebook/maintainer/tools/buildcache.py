"""Keep the book's execution cache honest, page by page: the record of a page's green run.

jupyter-cache re-executes a notebook only when its *code cells* change, and Sphinx re-reads
a page only when its *source file* changes. A page's outputs also depend on what its run
read: the ``casebook`` modules it imports (and those they import, found in their source:
jupyter-cache does not look there), its case folder, the registry of every case (each
``case.toml``, ``era.txt`` and case package), the historical wheels' manifest, the stored
runs it shows, the Python, the platform and the installed releases (the lock as installed,
GPU plugin included). :func:`page_digest` hashes those *inputs* for one page.

The test command and the build share one record of each page's green run: its outputs in
the build's jupyter-cache (:func:`store_executed`) and, in :data:`RECORDS` beside it, the
digest of the inputs that run read and its date. The test command reports a page whose
record matches its inputs today as passed from that record, with the record's date
(:func:`green_record`; ``--fresh`` or ``CI=true`` prove every page again); the build
executes only the pages without a matching record, and :func:`invalidate_if_stale` drops
each record whose inputs changed, and Sphinx's parsed pages with it, so that the book never
shows the outputs of older code. Edit one case page and the next test command proves that
page (and the book pages that read every case's files) again, not the book.

Standard library only, except :func:`store_executed` and the cache look-ups, which import
nbformat and jupyter-cache (the test run and the build have both).
"""

from __future__ import annotations

import ast
import contextlib
import datetime
import fcntl
import functools
import hashlib
import importlib.metadata
import json
import os
import platform
import re
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

SHARED = (
    "casebook/cases/*/__init__.py",  # the registry imports every case package...
    "casebook/cases/*/case.toml",  # ...which reads its case.toml
    "casebook/cases/*/era.txt",  # each era's lock
    "casebook/cases/findings/**/*",  # the board's rows that belong to no case
    "casebook/**/*.toml",  # the manifest, the families
    "book/measurements/**/*.json",  # stored runs the pages show
)
"""Inputs of every page, relative to the repository root: what the registry and the
runner read whatever a page imports (they are small and change rarely)."""

CACHES = (".jupyter_cache", "jupyter_execute", ".doctrees")
"""What the build keeps between runs that holds executed outputs (relative to ``_build``)."""

JUPYTER_CACHE = ".jupyter_cache"
"""The execution cache Jupyter Book reads (``_config.yml``: ``execute.cache: ""``)."""

RECORDS = ".casebook-records.json"
"""``{page: {"inputs": digest, "date": ...}}`` for each page in the cache (under ``_build``)."""

FRESH_ENV = "CASEBOOK_FRESH"
"""Set (``python3 -m casebook test --fresh``, or ``CI=true``): prove every page again."""

REGISTRY = "casebook.cases"
"""The registry, which imports every case package by its folder's name (not by name in its
source)."""

_NAME = re.compile(r"\bcasebook(?:\.\w+)+")
_MODULE = re.compile(r"^(casebook(?:\.\w+)+)(?::\w+)?$")


def fresh() -> bool:
    """Whether this run proves every page again instead of trusting records."""
    return bool(os.environ.get(FRESH_ENV)) or os.environ.get("CI", "").lower() == "true"


def _module_file(root: Path, name: str) -> Path | None:
    """The source file of module ``name`` (dotted) under ``root``, if it is one."""
    base = root.joinpath(*name.split("."))
    for path in (base / "__init__.py", base.with_suffix(".py")):
        if path.is_file():
            return path
    return None


@functools.cache
def _names_in(root: Path, path: Path) -> frozenset[str]:
    """The ``casebook`` modules the module ``path`` imports (anywhere in it, relative
    imports resolved) or names in a string that is a module name (a ``-m`` target, a
    program such as ``"casebook.cases.optax_969.leak:main"``)."""
    package = ".".join(path.relative_to(root).with_suffix("").parts)
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: -node.level]
                base = ".".join([*parent, *([base] if base else [])])
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.update(_MODULE.findall(node.value))
    return frozenset(n for n in names if n == "casebook" or n.startswith("casebook."))


def imported_modules(root: Path, code: str) -> list[Path]:
    """Every ``casebook`` source file that ``code`` (a page's code cells) may import, with
    the packages above each, following the imports in their source to the end."""
    start = {n for n in _NAME.findall(code)} | {
        f"casebook.{m}"
        for line in re.findall(r"from casebook import ([\w, ]+)", code)
        for m in line.replace(" ", "").split(",")
    }
    start |= {"casebook"} if "casebook" in code else set()
    seen: set[Path] = set()
    todo = list(start)
    while todo:
        name = todo.pop()
        parts = name.split(".")
        for end in range(1, len(parts) + 1):  # a.b.c imports a and a.b first
            path = _module_file(root, ".".join(parts[:end]))
            if path is not None and path not in seen:
                seen.add(path)
                todo.extend(_names_in(root, path))
                if ".".join(parts[:end]) == REGISTRY:  # it imports every case package
                    todo.extend(
                        f"{REGISTRY}.{p.parent.name}" for p in path.parent.glob("*/__init__.py")
                    )
    return sorted(seen)


def _case_folder(root: Path, page: Path) -> Path | None:
    """The case folder of a case page (``notebooks/06-optax-969-….ipynb``:
    ``casebook/cases/optax_969``), read from its number and name."""
    match = re.match(r"\d+-([a-z]+)-(\d+)-", page.name)
    if match is None:
        return None
    folder = root / "casebook" / "cases" / f"{match[1]}_{match[2]}"
    return folder if folder.is_dir() else None


def page_inputs(root: Path, page: Path) -> list[Path]:
    """The files a run of ``page`` reads, besides the interpreter: the page, the
    ``casebook`` modules it imports, its case folder (every case folder for a book page,
    which shows them all), and :data:`SHARED`."""
    import nbformat

    notebook = nbformat.read(page, as_version=4)
    code = "\n".join(c.source for c in notebook.cells if c.cell_type == "code")
    files = {page, *imported_modules(root, code)}
    folder = _case_folder(root, page)
    folders = [folder] if folder else sorted((root / "casebook" / "cases").iterdir())
    files.update(p for f in folders if f.is_dir() for p in f.rglob("*") if p.is_file())
    files.update(p for pattern in SHARED for p in root.glob(pattern) if p.is_file())
    return sorted(p for p in files if "__pycache__" not in p.parts)


@functools.cache
def stack() -> str:
    """The interpreter, the platform, the jax backend's settings and every installed
    release (the lock as installed, a GPU plugin included), as one text."""
    releases = sorted(
        f"{d.metadata['Name'].lower()}=={d.version}" for d in importlib.metadata.distributions()
    )
    backend = [f"{k}={os.environ.get(k, '')}" for k in ("JAX_PLATFORMS", "CUDA_VISIBLE_DEVICES")]
    machine = [sys.version, platform.platform(), str(Path("/dev/nvidia0").exists())]
    return "\n".join([*machine, *backend, *releases])


def page_digest(root: Path, page: Path) -> str:
    """One sha256 over :func:`stack` and the path and bytes of each of
    :func:`page_inputs`."""
    digest = hashlib.sha256(stack().encode() + b"\0")
    for path in page_inputs(root, page):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def _key(root: Path, page: Path) -> str:
    return page.resolve().relative_to(root.resolve()).as_posix()


def _read(build: Path) -> dict[str, dict[str, str]]:
    path = build / RECORDS
    return json.loads(path.read_text()) if path.exists() else {}


@contextlib.contextmanager
def _records(build: Path) -> Iterator[dict[str, dict[str, str]]]:
    """The records, under the build folder's lock (shared by the test workers and the
    build), written back when the block ends."""
    build.mkdir(parents=True, exist_ok=True)
    with (build / ".casebook-cache.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        records = _read(build)
        yield records
        (build / RECORDS).write_text(json.dumps(records, indent=1, sort_keys=True) + "\n")


def _read_by_sphinx(build: Path, records: dict[str, dict[str, str]]) -> tuple[Path, str]:
    """The stamp of the records Sphinx last read the pages with, and today's."""
    seen = hashlib.sha256(json.dumps(records, sort_keys=True).encode()).hexdigest()
    return build / ".casebook-read.sha256", seen


def _cache(build: Path) -> Any:
    from jupyter_cache import get_cache

    return get_cache(str(build / JUPYTER_CACHE))


def green_record(root: Path, page: Path, build: Path | None = None) -> str | None:
    """The date of ``page``'s green run if the cache holds its outputs for its code today
    and that run read the inputs it would read today (:func:`page_digest`); else None."""
    import nbformat

    build = build or root / "_build"
    entry = _read(build).get(_key(root, page))
    if entry is None or entry["inputs"] != page_digest(root, page):
        return None
    try:
        _cache(build).match_cache_notebook(nbformat.read(page, as_version=4))
    except KeyError:
        return None
    return entry["date"]


def invalidate_if_stale(root: Path, build: Path | None = None) -> list[str]:
    """Drop from the build's cache every page whose record's inputs differ from today's
    (or that has no record), and, if any was dropped or stored since the last build,
    Sphinx's parsed pages and executed copies, so that every page is read again with
    the outputs its inputs vouch for; the pages dropped."""
    build = build or root / "_build"
    dropped: list[str] = []
    with _records(build) as records:
        exists = (build / JUPYTER_CACHE).exists()
        cache: Any = _cache(build) if exists else None
        for record in cache.list_cache_records() if exists else []:
            page = Path(record.uri)
            key = _key(root, page) if page.exists() else record.uri
            entry = records.get(key)
            if entry is None or not page.exists() or entry["inputs"] != page_digest(root, page):
                cache.remove_cache(record.pk)
                records.pop(key, None)
                dropped.append(key)
        stamp, seen = _read_by_sphinx(build, records)
        if dropped or not stamp.exists() or stamp.read_text() != seen:
            for name in CACHES[1:]:
                shutil.rmtree(build / name, ignore_errors=True)
        stamp.write_text(seen)
    return dropped


def record_built(root: Path, build: Path | None = None) -> None:
    """After a build: record each notebook page the build executed itself (in the cache
    without a record, so run with today's inputs), and mark the records as read by Sphinx.
    A text page with code cells (How to read, MyST Markdown) is executed by the build
    itself every time, in seconds, and has no record."""
    build = build or root / "_build"
    with _records(build) as records:
        for record in _cache(build).list_cache_records():
            page = Path(record.uri)
            if page.suffix == ".ipynb" and page.exists() and _key(root, page) not in records:
                records[_key(root, page)] = _entry(root, page)
        stamp, seen = _read_by_sphinx(build, records)
        stamp.write_text(seen)


def record_inputs(root: Path, digests: dict[Path, str], build: Path | None = None) -> None:
    """Record, for each page a run stored in the cache, the digest of the inputs that run
    read (``digests``, taken before it)."""
    with _records(build or root / "_build") as records:
        for page, digest in digests.items():
            records[_key(root, page)] = _entry(root, page, digest)


def _entry(root: Path, page: Path, digest: str | None = None) -> dict[str, str]:
    now = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    return {"inputs": digest or page_digest(root, page), "date": now}


def store_executed(
    root: Path, source: Path, executed: Any, build: Path | None = None, digest: str | None = None
) -> bool:
    """Record ``executed`` (the page ``source`` as a green run executed it) as the page's
    record: its outputs into the build's execution cache, so that the build reuses them,
    and the digest of the inputs the run read (``digest``, taken before the run; computed
    now if not given) into :data:`RECORDS`; whether it did.

    The cached notebook is ``source`` as read from disk with the executed cells' outputs
    and counts, so its key is the one the build computes (the runner's per-cell timing
    metadata left out); a run of other code than the file's is not stored.
    """
    import nbformat
    from jupyter_cache.base import CacheBundleIn

    build = build or root / "_build"
    notebook = nbformat.read(source, as_version=4)
    code = [c for c in notebook.cells if c.cell_type == "code"]
    ran = [c for c in executed.cells if c.cell_type == "code"]
    if len(code) != len(ran) or any(c.source != r.source for c, r in zip(code, ran, strict=True)):
        return False
    for cell, result in zip(code, ran, strict=True):
        cell.outputs, cell.execution_count = result.outputs, result.execution_count
    with _records(build) as records:
        cache = _cache(build)
        for old in cache.list_cache_records():  # the page's record of older code
            if old.uri == str(source):
                cache.remove_cache(old.pk)
        bundle = CacheBundleIn(notebook, str(source), data={"stored_by": "the test command"})
        cache.cache_notebook_bundle(bundle, check_validity=False, overwrite=True)
        records[_key(root, source)] = _entry(root, source, digest)
    return True


def run_or_take_record(
    root: Path, page: Path, run: Callable[[], Any], build: Path | None = None
) -> tuple[Any, str | None]:
    """``(None, date)`` when ``page`` has a green record for today's inputs (and this run
    is not :func:`fresh`); else ``(run(), None)``, and the run recorded if it passed
    (its result's ``error`` is None; a run that raises records nothing)."""
    if not fresh() and (date := green_record(root, page, build)):
        return None, date
    digest = page_digest(root, page)  # what the run reads, taken before it
    result = run()
    if result.error is None:
        store_executed(root, page, result.nb, build, digest)
    return result, None

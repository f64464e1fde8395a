"""``python3 -m casebook bench --profile [PAGE ...]``: where each page spends its time, cell by cell.

Each page runs once, serially, in a fresh kernel (the book's executor, errors allowed: a
failing cell is timed too and the page goes on); a cell's seconds are nbclient's own record
of its run (``record_timing``, :func:`casebook.maintainer.tools.executor.window_of`). Each page's
kernel starts its own warm release servers, which end with it. A cell's time is put in one
kind, read from its code: the set-up and imports, runs in an era stack, runs on historical
releases (warm, forked from a server, or a server's start: each start is logged, with its
time, under ``CASEBOOK_POOL_LOG``, and a start within a cell's run is split off it),
benchmarks (cells tagged ``benchmark``), traces and jaxpr printing, and the rest. The
kernel's own start is the page's wall time less its cells'. It prints one table of pages
by kind and the slowest cells of all, which say what to make faster first.
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from casebook import storage
from casebook.display import Table
from casebook.maintainer.tools import executor
from casebook.releases._pool import POOL_LOG_ENV

__all__ = ["KINDS", "CellTime", "PageProfile", "kind_of", "main", "profile_page"]

KINDS = (
    "kernel start",
    "set-up and imports",
    "era runs",
    "release runs (server starts)",
    "release runs (warm)",
    "benchmarks",
    "traces and jaxprs",
    "other",
)
"""The kinds a page's time is split into, in the order the table shows them."""

_ERA = re.compile(r"era:|eras\.history|ERA\b")
_RELEASE = re.compile(
    r"%%on_release|releases\.(run|program_table|run_program|version_table|patched)\b"
)
_TRACE = re.compile(r"\btrace\.|jaxpr|eval_shape|record_cond_branches|treedef")
_IMPORTS = re.compile(r"^\s*(import |from |%load_ext|%matplotlib|$|#)")


def kind_of(source: str, tags: list[str]) -> str:
    """The kind of a cell's time, from its tags and code (first match wins)."""
    if "benchmark" in tags:
        return "benchmarks"
    if "casebook-setup" in tags or all(_IMPORTS.match(line) for line in source.splitlines()):
        return "set-up and imports"
    if _ERA.search(source):
        return "era runs"
    if _RELEASE.search(source):
        return "release runs (warm)"
    if _TRACE.search(source):
        return "traces and jaxprs"
    return "other"


@dataclass
class CellTime:
    """One cell: its page, index, first line, kind and seconds (server starts split off)."""

    page: str
    index: int
    first_line: str
    kind: str
    seconds: float


@dataclass
class PageProfile:
    """A page's wall time and its cells."""

    page: str
    wall: float
    cells: list[CellTime] = field(default_factory=list)

    def by_kind(self) -> dict[str, float]:
        """Seconds per kind; the kernel's start is what the cells do not account for."""
        out = dict.fromkeys(KINDS, 0.0)
        for cell in self.cells:
            out[cell.kind] += cell.seconds
        out["kernel start"] = max(0.0, self.wall - sum(c.seconds for c in self.cells))
        return out


def profile_page(path: Path, timeout: int = 900) -> PageProfile:
    """Run ``path`` in a fresh kernel (:func:`casebook.maintainer.tools.executor.execute`, errors
    allowed) and put each cell's recorded seconds in its kind."""
    with storage.owned_tempdir("profile") as logs:  # the servers' start log
        log = Path(logs) / "pool.jsonl"
        os.environ[POOL_LOG_ENV] = str(log)
        run = executor.execute(path, timeout=timeout, allow_errors=True)
        starts = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    profile = PageProfile(path.as_posix(), run.seconds)
    for ran in run.cells:
        cell = run.notebook.cells[ran.index]
        source, seconds = "".join(cell.source), ran.seconds
        kind = kind_of(source, list(cell.get("metadata", {}).get("tags", [])))
        first = next((line for line in source.splitlines() if line.strip()), "")[:70]
        low, high = executor.window_of(cell)
        paid = sum(s["seconds"] for s in starts if low <= s["at"] <= high)
        if paid and kind != "benchmarks":
            kind_paid = "release runs (server starts)"
            profile.cells.append(CellTime(path.name, ran.index, first, kind_paid, paid))
            seconds = max(0.0, seconds - paid)
        profile.cells.append(CellTime(path.name, ran.index, first, kind, seconds))
    return profile


def _table(profiles: list[PageProfile]) -> Table:
    rows = [
        (Path(p.page).name[:40], f"{p.wall:.1f}", *(f"{v:.1f}" for v in p.by_kind().values()))
        for p in profiles
    ]
    totals = [sum(p.by_kind()[k] for p in profiles) for k in KINDS]
    rows.append(
        ("all pages", f"{sum(p.wall for p in profiles):.1f}", *(f"{v:.1f}" for v in totals))
    )
    return Table(("page", "total", *KINDS), tuple(rows))


def _slowest(profiles: list[PageProfile], n: int) -> Table:
    cells = sorted((c for p in profiles for c in p.cells), key=lambda c: -c.seconds)[:n]
    rows = tuple(
        (f"{c.seconds:.1f}", c.page[:32], str(c.index), c.kind, f"`{c.first_line}`") for c in cells
    )
    return Table(("s", "page", "cell", "kind", "first line"), rows)


def main(pages: list[str], top: int = 10) -> int:
    """Profile ``pages`` (``.ipynb`` files, relative to the repository) and print both
    tables (``bench --profile``)."""
    from casebook.project import ROOT

    profiles = []
    for page in pages:
        print(f"casebook bench --profile: {page}", file=sys.stderr, flush=True)
        profiles.append(profile_page(ROOT / page))
    print(_table(profiles))
    print(f"\nThe {top} slowest cells:\n")
    print(_slowest(profiles, top))
    return 0

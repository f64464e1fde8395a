"""``python3 -m casebook profile [PAGE ...]``: where each page spends its time, cell by cell.

Each page runs once, serially, in a fresh kernel (as nbmake runs it), with every cell
timed; all pages share one pool of warm release servers, which ends with the profile. A
cell's time is put in one kind, read from its code: the set-up and imports,
runs in an era stack, runs on historical releases (warm, forked from a server, or
including a server's start: the pool logs each start under ``CASEBOOK_POOL_LOG``),
benchmarks (cells tagged ``benchmark``), traces and jaxpr printing, and the rest. The
kernel's own start is the page's wall time less its cells'. It prints one table of pages
by kind and the slowest cells of all, which say what to make faster first.

Only the standard library at import, and the book's one executor
(:mod:`casebook.tools.executor`) when it runs, so it can profile another checkout's pages
with that checkout's venv: ``OTHER/.venv/bin/python casebook/tools/profile.py`` (a
checkout whose ``casebook.tools.suite`` has ``kept_pool``).
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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

POOL_LOG_ENV = "CASEBOOK_POOL_LOG"
"""Names the file where the pool logs each server start (JSON lines, ``seconds``)."""

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


def _server_starts(log: Path, since: int) -> tuple[float, int]:
    """Seconds of server starts logged after line ``since``, and the new line count."""
    if not log.exists():
        return 0.0, since
    lines = log.read_text().splitlines()
    return sum(json.loads(line)["seconds"] for line in lines[since:]), len(lines)


def profile_page(path: Path, timeout: int = 900) -> PageProfile:
    """Run ``path`` in a fresh kernel (:func:`casebook.tools.executor.execute`, errors
    allowed: a failing cell is timed too and the page goes on), timing each cell."""
    from casebook import storage
    from casebook.tools import executor

    logs = storage.owned_tempdir("profile")  # the pool's start log, removed at the end
    log = Path(logs.name) / "pool.jsonl"
    os.environ[POOL_LOG_ENV] = str(log)
    profile = PageProfile(path.as_posix(), 0.0)
    seen_lines = 0

    def on_cell(cell_index: int, cell: Any, seconds: float) -> None:
        nonlocal seen_lines
        starts, seen_lines = _server_starts(log, seen_lines)
        source = "".join(cell.source)
        kind = kind_of(source, list(cell.get("metadata", {}).get("tags", [])))
        first = next((line for line in source.splitlines() if line.strip()), "")[:70]
        if starts and kind != "benchmarks":
            profile.cells.append(
                CellTime(path.name, cell_index, first, "release runs (server starts)", starts)
            )
            seconds = max(0.0, seconds - starts)
        profile.cells.append(CellTime(path.name, cell_index, first, kind, seconds))

    with logs:
        run = executor.execute(path, timeout=timeout, allow_errors=True, on_cell=on_cell)
    profile.wall = run.seconds
    return profile


def _table(profiles: list[PageProfile]) -> str:
    head = ["page", "total", *KINDS]
    rows = [
        [Path(p.page).name[:40], f"{p.wall:.1f}", *(f"{v:.1f}" for v in p.by_kind().values())]
        for p in profiles
    ]
    totals = [sum(p.by_kind()[k] for p in profiles) for k in KINDS]
    rows.append(
        ["all pages", f"{sum(p.wall for p in profiles):.1f}", *(f"{v:.1f}" for v in totals)]
    )
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]
    line = "| " + " | ".join(h.ljust(w) for h, w in zip(head, widths)) + " |"
    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    body = ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |" for r in rows]
    return "\n".join([line, rule, *body])


def _slowest(profiles: list[PageProfile], n: int) -> str:
    cells = sorted((c for p in profiles for c in p.cells), key=lambda c: -c.seconds)[:n]
    out = ["| s | page | cell | kind | first line |", "|---|---|---|---|---|"]
    out += [
        f"| {c.seconds:.1f} | {c.page[:32]} | {c.index} | {c.kind} | `{c.first_line}` |"
        for c in cells
    ]
    return "\n".join(out)


DEFAULT_PAGES = ("notebooks", "book")


def main(argv: list[str] | None = None) -> int:
    """Profile the pages (all executed pages, or those named) and print both tables."""
    argv = list(argv or [])
    top = 10
    if "--top" in argv:
        i = argv.index("--top")
        top = int(argv[i + 1])
        del argv[i : i + 2]
    paths: list[Path] = []
    for name in argv or DEFAULT_PAGES:
        p = Path(name)
        paths += sorted(p.glob("*.ipynb")) if p.is_dir() else [p]
    profiles = []
    from casebook.tools.suite import kept_pool  # the checkout's own (see the module's text)

    with kept_pool():
        for path in paths:
            print(f"casebook profile: {path}", file=sys.stderr, flush=True)
            profiles.append(profile_page(path))
    print(_table(profiles))
    print()
    print(f"The {top} slowest cells:\n")
    print(_slowest(profiles, top))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

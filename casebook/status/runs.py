"""Where the book's pages have run: device, versions, and pass or fail for each page.

``python -m casebook.status.runs [PAGE ...]`` runs each executed page with the book's one
executor (:mod:`casebook.tools.executor`), one after the other in this interpreter's
environment, and stores one JSON record per machine under ``book/measurements/runs/``: the
device, Python and package versions, and each page's outcome, seconds and failing cells.
A machine that cannot hold the era stacks (a GPU image without network) runs with
``--without-eras``: every cell runs, and the board reads its failures against the cells
that need an era (:data:`WITHOUT_ERAS`). The status board shows every stored
record with :func:`table`, so a run on a GPU machine with its own preinstalled jax is
data the book reads, not a sentence in a note. Nothing here invents a run: a machine
appears only if a record of it was stored.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import hashlib
import json
import os
import platform
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from casebook import storage
from casebook.bench import records
from casebook.display import Table, TableDisplay
from casebook.project import LIBRARIES, ROOT
from casebook.tools import executor

__all__ = ["RunsTable", "table"]

STORE = records.STORE / "runs"
WITHOUT_ERAS = STORE / "without-eras"
"""Runs with the era stacks withheld on a machine where every page passes with them: they
name each page's era cells (the cells that fail without an era, at that page's commit),
against which a GPU run without eras is read. Not rows of the table."""
DEFAULT_PAGES = ("notebooks/", "book/")


def pages(paths: list[str]) -> list[str]:
    """The executed pages under ``paths`` (directories or ``.ipynb`` files), relative to the
    repository."""
    pages = []
    for path in paths:
        full = ROOT / path
        found = sorted(full.glob("*.ipynb")) if full.is_dir() else [full]
        pages += [p.relative_to(ROOT).as_posix() for p in found]
    return pages


def run_page(
    page: str,
    *,
    timeout: int = 900,
    env: dict[str, str] | None = None,
    allow_errors: bool = False,
) -> tuple[dict, str]:
    """Run one page with the book's executor (:mod:`casebook.tools.executor`) in a
    subprocess of this interpreter, with ``env`` added to the environment: its summary
    (passed, seconds, the failing cells) and the tail of its error output. With
    ``allow_errors`` every cell runs, so the summary lists each failing one."""
    with storage.owned_tempdir("run") as tmp:
        out = Path(tmp) / Path(page).name
        flags = ["--allow-errors"] if allow_errors else []
        proc = subprocess.run(
            [sys.executable, "-P", executor.__file__, str(ROOT / page), str(out), *flags],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=None if env is None else {**os.environ, **env},
        )
        summary_file = Path(f"{out}.json")
        if not summary_file.exists():  # the executor itself failed
            return {"passed": False, "seconds": 0.0, "failed_cells": []}, proc.stderr[-3000:]
        return json.loads(summary_file.read_text()), proc.stderr[-3000:]


def _git(*args: str) -> str:
    """A git command's output in the checkout, or "" where there is no git history (an
    installed package, Colab)."""
    try:
        proc = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return ""
    return proc.stdout.strip() if proc.returncode == 0 else ""


def page_digest(page: str) -> str:
    """The sha256 of ``page``'s file (12 hex digits): what a run ran, wherever it ran (a
    device's copy of the tree may carry an older git history, or none)."""
    return hashlib.sha256((ROOT / page).read_bytes()).hexdigest()[:12]


def page_commit(page: str) -> str:
    """The last commit that changed ``page`` (short hash), "" without git history."""
    return _git("log", "-1", "--format=%h", "--", page)


def page_changed_after(page: str, date: str) -> bool | None:
    """Whether a commit after the end of ``date`` (YYYY-MM-DD) changed ``page``; None
    without git history."""
    if not _git("rev-parse", "--git-dir"):
        return None
    return bool(_git("log", "-1", "--format=%h", f"--after={date}T23:59:59", "--", page))


@contextlib.contextmanager
def eras_withheld() -> Iterator[dict[str, str]]:
    """The environment of a run without era stacks, as on a machine that cannot hold them
    (a GPU image without network: each era's jaxlib alone is larger than what travels).
    The cache's historical releases are kept; its ``eras/`` is an empty folder, and neither
    uv nor pip may reach an index, so every era cell fails at once."""
    from casebook.releases import cache_dir

    with storage.owned_tempdir("no-eras") as tmp:
        for part in ("releases", "patched", "wheels"):
            if (cache_dir() / part).exists():
                (Path(tmp) / part).symlink_to(cache_dir() / part)
        # uv offline with an empty cache of its own: a wheel cache of this machine would
        # otherwise build the era after all.
        yield {
            "CASEBOOK_CACHE": tmp,
            "UV_OFFLINE": "1",
            "UV_CACHE_DIR": str(Path(tmp) / "uv-cache"),
            "PIP_NO_INDEX": "1",
        }


def run_pages(paths: list[str], *, timeout: int = 900, without_eras: bool = False) -> dict:
    """Run each page and return the record of this machine. ``without_eras`` withholds
    the era stacks (:func:`eras_withheld`) and runs every cell, so the record lists the
    cells that failed; :class:`RunsTable` compares them with the era cells of the page."""
    from casebook.bench import device_label

    outcomes = {}
    with contextlib.ExitStack() as stack:
        env = stack.enter_context(eras_withheld()) if without_eras else None
        for page in pages(paths):
            summary, tail = run_page(page, timeout=timeout, env=env, allow_errors=without_eras)
            outcomes[page] = {**summary, "commit": page_commit(page), "digest": page_digest(page)}
            failed = len(summary["failed_cells"])
            verdict = "PASS" if summary["passed"] else f"FAIL ({failed} cells)"
            print(f"{verdict} {page} ({summary['seconds']} s)", flush=True)
            if not summary["passed"] and not without_eras:
                print(tail, flush=True)
    return {
        "device": device_label(),
        "date": datetime.date.today().isoformat(),
        "python": platform.python_version(),
        "versions": records.versions(),
        "commit": _git("rev-parse", "--short", "HEAD"),
        "eras": "withheld" if without_eras else "run",
        "pages": outcomes,
    }


def save(record: dict, store: Path = STORE) -> Path:
    """Store ``record`` as this device's run. An earlier record of the same device, date
    and versions keeps the pages this run did not repeat; any other is replaced."""
    store.mkdir(parents=True, exist_ok=True)
    path = store / f"{records.slug(record['device'])}.json"
    if path.exists():
        old = json.loads(path.read_text())
        if all(old.get(k) == record[k] for k in ("date", "python", "versions")):
            record = {**record, "pages": {**old["pages"], **record["pages"]}}
    return storage.write_text(path, json.dumps(record, indent=1, sort_keys=True) + "\n")


def load(store: Path = STORE) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(store.glob("*.json"))]


@dataclass(repr=False)
class RunsTable(TableDisplay):
    """The stored runs as a table: one row per machine, one column per page."""

    runs: list[dict]
    references: list[dict] = field(default_factory=list)

    def changed_since(self, run: dict) -> list[str]:
        """The pages of ``run`` that changed after it: their last commit differs from the
        one the run recorded, or (an older record without commits) a commit after the
        run's date changed them. Empty without git history."""
        out = []
        for page, got in run["pages"].items():
            if got.get("digest"):
                if page_digest(page) != got["digest"]:
                    out.append(page)
            elif got.get("commit"):
                if page_commit(page) not in ("", got["commit"]):
                    out.append(page)
            elif page_changed_after(page, run["date"]):
                out.append(page)
        return out

    def era_cells(self, page: str, ran: dict) -> set[int] | None:
        """The cells of ``page`` (as the run ``ran`` of it ran it: the same file digest, or
        commit where a record has no digest) that fail without era stacks on a machine where
        the page passes with them; None where no such run was stored."""
        key = "digest" if ran.get("digest") else "commit"
        for ref in self.references:
            got = ref["pages"].get(page)
            if got and got.get(key) and got.get(key) == ran.get(key):
                return {c["index"] for c in got["failed_cells"]}
        return None

    def verdict(self, run: dict, page: str, got: dict) -> str:
        """ "pass (12 s)"; "pass (12 s) except 9 era cells" for a run without eras whose
        failing cells are exactly cells that need an era; "unjudged" for a run without eras
        of a version of the page no reference ran; "FAIL (12 s)" otherwise."""
        seconds = f"{got['seconds']:.0f} s"
        if got["passed"]:
            return f"pass ({seconds})"
        failed = {c["index"] for c in got.get("failed_cells", [])}
        eras = self.era_cells(page, got)
        if run.get("eras") == "withheld":
            if eras is None:  # no reference run of the page as this run ran it
                return f"unjudged ({seconds}): {len(failed)} cells failed without eras"
            if failed <= eras:
                return f"pass ({seconds}) except {len(failed)} era cells"
        return f"FAIL ({seconds})"

    def freshness(self) -> str:
        """One line per machine: when it last ran the pages, at which commit, and which
        pages changed since (so a reader knows which results predate the page)."""
        lines = []
        for run in self.runs:
            commit = run.get("commit") or "commit not recorded"
            changed = self.changed_since(run)
            since = (
                f"{len(changed)} of {len(run['pages'])} pages changed since: "
                + ", ".join(Path(p).stem for p in changed)
                if changed
                else "no page changed since"
            )
            lines.append(f"{run['device']}: last run {run['date']} ({commit}); {since}")
        return "\n".join(lines)

    def table(self) -> Table:
        pages = sorted(
            {p for run in self.runs for p in run["pages"]},
            key=lambda page: (not page.startswith("notebooks/"), page),
        )
        head = [
            "device",
            "date",
            "python",
            "jax",
            "optax",
            "equinox",
            "diffrax",
            *(Path(p).stem.split("-")[0] for p in pages),
        ]
        rows = []
        for run in self.runs:
            cells = [
                run["device"],
                run["date"],
                run["python"],
                *(run["versions"].get(n, "-") for n in LIBRARIES),
            ]
            changed = set(self.changed_since(run))
            for page in pages:
                got = run["pages"].get(page)
                mark = " *" if page in changed else ""
                cells.append("-" if got is None else self.verdict(run, page, got) + mark)
            rows.append(cells)
        return Table(
            tuple(head),
            tuple(tuple(r) for r in rows),
            caption="Stored runs of every executed page (pytest --nbmake); * marks a page "
            "changed since that run",
        )


def table(store: Path = STORE) -> RunsTable:
    return RunsTable(load(store), load(store / WITHOUT_ERAS.name))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m casebook.status.runs", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("pages", nargs="*", default=list(DEFAULT_PAGES))
    parser.add_argument("--store", type=Path, default=STORE)
    parser.add_argument(
        "--without-eras",
        action="store_true",
        help="withhold the era stacks and run every cell (a GPU image without network); "
        f"with --store {WITHOUT_ERAS.relative_to(ROOT)} on a machine where every page "
        "passes, the reference that names each page's era cells",
    )
    args = parser.parse_args(argv)
    record = run_pages(args.pages, without_eras=args.without_eras)
    print(f"stored {save(record, args.store)}")
    return 0 if all(p["passed"] for p in record["pages"].values()) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

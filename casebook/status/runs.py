"""Where the book's pages have run: device, versions, and pass or fail for each page.

``python -m casebook.status.runs [PAGE ...]`` runs each executed page as a test (``pytest
--nbmake``), one after the other in this interpreter's environment, and stores one JSON
record per machine under ``book/measurements/runs/``: the device, Python and package
versions, and each page's outcome and seconds. The status board shows every stored
record with :func:`table`, so a run on a GPU machine with its own preinstalled jax is
data the book reads, not a sentence in a note. Nothing here invents a run: a machine
appears only if a record of it was stored.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from casebook import storage
from casebook.bench import records
from casebook.display import Table, TableDisplay
from casebook.project import LIBRARIES, ROOT
from casebook.tools import environment

__all__ = ["RunsTable", "table"]

STORE = records.STORE / "runs"
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
    page: str, *, timeout: int = 900, env: dict[str, str] | None = None
) -> tuple[bool, float, str]:
    """Run one page with ``pytest --nbmake``: (passed, seconds, the output's tail)."""
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, *environment.PAGE_TESTS, "-n", "0", page],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=None if env is None else {**os.environ, **env},
    )
    return proc.returncode == 0, round(time.perf_counter() - t0, 1), proc.stdout[-3000:]


def _git(*args: str) -> str:
    """A git command's output in the checkout, or "" where there is no git history (an
    installed package, Colab)."""
    try:
        proc = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return ""
    return proc.stdout.strip() if proc.returncode == 0 else ""


def page_commit(page: str) -> str:
    """The last commit that changed ``page`` (short hash), "" without git history."""
    return _git("log", "-1", "--format=%h", "--", page)


def page_changed_after(page: str, date: str) -> bool | None:
    """Whether a commit after the end of ``date`` (YYYY-MM-DD) changed ``page``; None
    without git history."""
    if not _git("rev-parse", "--git-dir"):
        return None
    return bool(_git("log", "-1", "--format=%h", f"--after={date}T23:59:59", "--", page))


def run_pages(paths: list[str], *, timeout: int = 900) -> dict:
    """Run each page with ``pytest --nbmake`` and return the record of this machine."""
    from casebook.bench import device_label

    outcomes = {}
    for page in pages(paths):
        passed, seconds, tail = run_page(page, timeout=timeout)
        outcomes[page] = {"passed": passed, "seconds": seconds, "commit": page_commit(page)}
        print(f"{'PASS' if passed else 'FAIL'} {page} ({seconds} s)", flush=True)
        if not passed:
            print(tail, flush=True)
    return {
        "device": device_label(),
        "date": datetime.date.today().isoformat(),
        "python": platform.python_version(),
        "versions": records.versions(),
        "commit": _git("rev-parse", "--short", "HEAD"),
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

    def changed_since(self, run: dict) -> list[str]:
        """The pages of ``run`` that changed after it: their last commit differs from the
        one the run recorded, or (an older record without commits) a commit after the
        run's date changed them. Empty without git history."""
        out = []
        for page, got in run["pages"].items():
            if got.get("commit"):
                if page_commit(page) not in ("", got["commit"]):
                    out.append(page)
            elif page_changed_after(page, run["date"]):
                out.append(page)
        return out

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
                cells.append(
                    "-"
                    if got is None
                    else f"{'pass' if got['passed'] else 'FAIL'} ({got['seconds']:.0f} s){mark}"
                )
            rows.append(cells)
        return Table(
            tuple(head),
            tuple(tuple(r) for r in rows),
            caption="Stored runs of every executed page (pytest --nbmake); * marks a page "
            "changed since that run",
        )


def table(store: Path = STORE) -> RunsTable:
    return RunsTable(load(store))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m casebook.status.runs", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("pages", nargs="*", default=list(DEFAULT_PAGES))
    parser.add_argument("--store", type=Path, default=STORE)
    args = parser.parse_args(argv)
    record = run_pages(args.pages)
    print(f"stored {save(record, args.store)}")
    return 0 if all(p["passed"] for p in record["pages"].values()) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

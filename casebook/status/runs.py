"""Where the book's pages have run: device, versions, and pass or fail for each page.

A machine that ran the pages (``python -m casebook.maintainer.tools.pageruns``, in a clone) stores one
JSON record under ``book/measurements/runs/``: the device, Python and package versions,
and each page's outcome, seconds and failing cells. A machine that cannot hold the era
stacks (a GPU image without network) runs with ``--without-eras``: every cell runs, and
the board reads its failures against the cells that need an era (``WITHOUT_ERAS``).
The status board shows every stored record with :func:`table`, so a run on a GPU machine
with its own preinstalled jax is data the book reads, not a sentence in a note. Nothing
here invents a run: a machine appears only if a record of it was stored. This module reads
the records; running the pages and storing them is ``casebook.maintainer.tools.pageruns``'s.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from casebook.bench import records
from casebook.display import Table, TableDisplay
from casebook.project import LIBRARIES, ROOT

__all__ = ["RunsTable", "table"]

STORE = records.STORE / "runs"
WITHOUT_ERAS = STORE / "without-eras"
"""Runs with the era stacks withheld on a machine where every page passes with them: they
name each page's era cells (the cells that fail without an era, at that page's commit),
against which a GPU run without eras is read. Not rows of the table."""


def git_output(*args: str) -> str:
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
    return git_output("log", "-1", "--format=%h", "--", page)


def page_changed_after(page: str, date: str) -> bool | None:
    """Whether a commit after the end of ``date`` (YYYY-MM-DD) changed ``page``; None
    without git history."""
    if not git_output("rev-parse", "--git-dir"):
        return None
    return bool(git_output("log", "-1", "--format=%h", f"--after={date}T23:59:59", "--", page))


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
    """The runs stored under ``store``, with and without eras, as the board shows them."""
    return RunsTable(load(store), load(store / WITHOUT_ERAS.name))

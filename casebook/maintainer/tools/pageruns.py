"""``python -m casebook.maintainer.tools.pageruns [PAGE ...]``: run the pages and store this machine's run.

Each executed page runs with the book's one executor (:mod:`casebook.maintainer.tools.executor`), one
after the other in this interpreter's environment; the record (device, Python and package
versions, each page's outcome, seconds and failing cells) is stored under
``book/measurements/runs/``, where the status board reads it (:mod:`casebook.status.runs`,
which also describes ``--without-eras``). It runs the clone's pages, so it lives in the
clone with the other maintainer's commands.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import sys
from collections.abc import Iterator
from pathlib import Path

from casebook import storage
from casebook.bench import records
from casebook.maintainer.tools import executor
from casebook.project import ROOT
from casebook.status.runs import STORE, WITHOUT_ERAS, git_output, page_commit, page_digest

__all__ = ["eras_withheld", "main", "pages", "run_page", "run_pages", "save"]

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
    env: dict[str, str] | None = None,
    allow_errors: bool = False,
) -> tuple[dict, str]:
    """Run one page with the book's executor (:mod:`casebook.maintainer.tools.executor`) in a
    subprocess of this interpreter, with ``env`` added to the environment: its summary
    (passed, seconds, the failing cells) and the tail of its error output. With
    ``allow_errors`` every cell runs, so the summary lists each failing one."""
    with storage.owned_tempdir("run") as tmp:
        out = Path(tmp) / Path(page).name
        summary, tail, _ = executor.in_subprocess(
            ROOT / page,
            out,
            env=None if env is None else {**os.environ, **env},
            allow_errors=allow_errors,
        )
        return summary, tail


@contextlib.contextmanager
def eras_withheld() -> Iterator[dict[str, str]]:
    """The environment of a run without era stacks, as on a machine that cannot hold them
    (a GPU image without network: each era's jaxlib alone is larger than what travels).
    The cache's releases' environments are kept, its eras' are not, and neither uv nor pip
    may reach an index, so every era cell fails at once."""
    from casebook.releases import cache_dir

    with storage.owned_tempdir("no-eras") as tmp:
        (Path(tmp) / "envs").mkdir()
        for env in (cache_dir() / "envs").glob("*"):
            if not env.name.startswith("era-"):
                (Path(tmp) / "envs" / env.name).symlink_to(env)
        # uv offline with an empty cache of its own: a wheel cache of this machine would
        # otherwise build the era after all.
        yield {
            "CASEBOOK_CACHE": tmp,
            "UV_OFFLINE": "1",
            "UV_CACHE_DIR": str(Path(tmp) / "uv-cache"),
            "PIP_NO_INDEX": "1",
        }


def run_pages(paths: list[str], *, without_eras: bool = False) -> dict:
    """Run each page and return the record of this machine. ``without_eras`` withholds
    the era stacks (:func:`eras_withheld`) and runs every cell, so the record lists the
    cells that failed; :class:`RunsTable` compares them with the era cells of the page."""
    from casebook.bench import device_label

    outcomes = {}
    with contextlib.ExitStack() as stack:
        env = stack.enter_context(eras_withheld()) if without_eras else None
        for page in pages(paths):
            summary, tail = run_page(page, env=env, allow_errors=without_eras)
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
        "commit": git_output("rev-parse", "--short", "HEAD"),
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
    return storage.write_atomic(path, json.dumps(record, indent=1, sort_keys=True) + "\n")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m casebook.maintainer.tools.pageruns", description=__doc__.split("\n\n")[0]
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

"""Watch the newest releases: ``python3 -m casebook test --latest [--report FILE]``.

Builds ``.casebook-latest/``, a venv with the newest jax, jaxlib, optax, equinox and diffrax
on PyPI (unpinned) and the rest of the book's needs, then runs the status board and every
executed page there, and prints what differs from the pinned run:

* a package whose newest release is not the locked one;
* a board row whose status is not the one recorded with its trigger (the pinned status,
  which the status page, ``book/status.ipynb``, holds the lock to);
* a page that fails (every page passes on the lock: that is the test command).

Exit status 0 when nothing differs, 1 when something does (the weekly workflow then
opens or updates an issue with the report), 2 when the watch itself could not run.
Standard library only: the work happens in the new venv.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from casebook import lock
from casebook.maintainer.tools import environment
from casebook.project import PACKAGES, ROOT

VENV = ROOT / ".casebook-latest"
WATCHED = PACKAGES
PAGES = ("notebooks/", "book/")

_BOARD = """
import json
from casebook.status import board
rows = board.run_board()
print(json.dumps([{"key": r.trigger.key, "status": r.status, "recorded": r.trigger.recorded,
                   "detail": r.detail} for r in rows]))
"""


def _installed(py: Path) -> dict[str, str]:
    out = subprocess.run(
        [py, "-m", "pip", "list", "--format=json"], check=True, capture_output=True, text=True
    ).stdout
    return {p["name"].lower(): p["version"] for p in json.loads(out)}


def build_venv() -> Path:
    """A fresh venv with the newest watched releases and ``casebook[book]`` (editable)."""
    shutil.rmtree(VENV, ignore_errors=True)
    environment.sh([sys.executable, "-m", "venv", VENV])
    py = environment.venv_python(VENV)
    pip = [py, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--upgrade"]
    environment.sh([*pip, "-e", f"{ROOT}[book]", *WATCHED])
    environment.sh([py, *environment.FETCH], cwd=ROOT)
    return py


def _failed_pages(junit: Path) -> list[str]:
    failed = []
    for case in ET.parse(junit).iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            failed.append(case.get("name") or case.get("classname") or "?")
    return failed


def watch(report: Path | None) -> int:
    lock.check_python()
    py = build_venv()
    lines: list[str] = []
    newest = _installed(py)
    locked = lock.locked_versions(WATCHED)
    versions = ", ".join(f"{n} {newest.get(n, '?')}" for n in WATCHED)
    bumped = [
        f"{n} {locked.get(n)} → {newest.get(n)}" for n in WATCHED if newest.get(n) != locked.get(n)
    ]
    lines.append(f"Newest releases: {versions}.")
    lines.append("Newer than the lock: " + (", ".join(bumped) if bumped else "none") + ".")

    board = subprocess.run([py, "-c", _BOARD], cwd=ROOT, capture_output=True, text=True)
    if board.returncode != 0:
        print(board.stderr[-3000:])
        return 2
    rows = json.loads(board.stdout.strip().splitlines()[-1])
    changed = [r for r in rows if r["status"] != r["recorded"]]
    lines.append(f"Status board: {len(rows)} rows, {len(changed)} changed.")
    lines += [f"  - {r['key']}: {r['recorded']} → {r['status']} ({r['detail']})" for r in changed]

    junit = VENV / "pages.xml"
    subprocess.run([py, *environment.PAGE_TESTS, f"--junitxml={junit}", *PAGES], cwd=ROOT)
    failed = _failed_pages(junit) if junit.exists() else ["(pytest wrote no report)"]
    lines.append(f"Pages that fail on the newest releases: {len(failed)}.")
    lines += [f"  - {name}" for name in failed]

    differs = bool(changed or failed)
    lines.append(
        "Verdict: "
        + ("something changed; see above." if differs else "the book holds on the newest releases.")
    )
    text = "\n".join(lines)
    print(text)
    if report:
        report.parent.mkdir(parents=True, exist_ok=True)
        report.write_text(text + "\n")
    return 1 if differs else 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m casebook test --latest", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--report", type=Path, help="also write the report (markdown) here")
    return watch(parser.parse_args(argv).report)

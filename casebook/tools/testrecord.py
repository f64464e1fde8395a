"""The unit tests' record: which tests passed on the checkout as it is now.

A page's record (:mod:`casebook.tools.buildcache`) holds what one page read. A unit test
reads more than its imports show: pages, case folders, the lock, programs it starts in
other processes (kernels, chromium, release servers), which coverage-based selection
(pytest-testmon) cannot see, so it would keep a test whose input changed. The record of
the unit tests is therefore keyed by everything: a digest of every file of the checkout
that git does not ignore (tracked or not), and of the stack (:func:`buildcache.stack`).
Change any file and every unit test runs again; change nothing and a test that passed is
reported from the record, as a page is. A test that failed, or was skipped, is never
taken from it; ``--fresh`` and ``CI=true`` ignore it (:func:`buildcache.fresh`).

Standard library only.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import json
import subprocess
from pathlib import Path

from casebook.tools import buildcache

RECORD = ".casebook-tests.json"
"""``{"inputs": digest, "date": ..., "passed": [node id, ...]}``, under ``_build``."""


@functools.cache
def checkout_digest(root: Path) -> str | None:
    """One sha256 over the stack and the path and bytes of every file of the checkout
    that git does not ignore; None outside a git checkout (then nothing is recorded)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        capture_output=True,
    )
    if listed.returncode:
        return None
    digest = hashlib.sha256(buildcache.stack().encode() + b"\0")
    for name in sorted(set(listed.stdout.decode().split("\0")) - {""}):
        path = root / name
        if path.is_file():
            digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _read(build: Path) -> dict:
    path = build / RECORD
    return json.loads(path.read_text()) if path.exists() else {}


def passed_on_record(root: Path, build: Path | None = None) -> tuple[set[str], str]:
    """The node ids the record holds as passed on the checkout as it is now, and the
    record's date (an empty set when the record is of other inputs, or :func:`fresh`)."""
    record = _read(build or root / "_build")
    digest = checkout_digest(root)
    if buildcache.fresh() or digest is None or record.get("inputs") != digest:
        return set(), ""
    return set(record["passed"]), record["date"]


def record(root: Path, passed: set[str], failed: set[str], build: Path | None = None) -> None:
    """Add a run's ``passed`` tests to the record of today's checkout (a record of other
    inputs is replaced), less its ``failed`` ones."""
    build = build or root / "_build"
    digest = checkout_digest(root)
    if digest is None:
        return
    old = _read(build)
    kept = set(old.get("passed", [])) if old.get("inputs") == digest else set()
    now = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    build.mkdir(parents=True, exist_ok=True)
    text = json.dumps(
        {
            "inputs": digest,
            "date": old.get("date", now) if kept else now,
            "passed": sorted((kept | passed) - failed),
        },
        indent=1,
    )
    (build / RECORD).write_text(text + "\n")

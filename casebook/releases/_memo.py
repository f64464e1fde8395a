"""Grids computed once per suite run: a version table's cells, shared by pages and tests.

A page's version grid (its trigger on every release, or a message's history over the
eras) can be asked for again in the same test run: ``tests/test_lessons_families.py``
runs the lessons page once more, top to bottom, and with it the page's
``program_table("lessons.lbfgs", ...)`` cells. (The workshop editions ask for none:
``tests/test_workshop.py`` checks them against their pages' runs.) Under the test
command, ``CASEBOOK_GRID_MEMO`` names a folder of the run's own, and :func:`run_once`
keeps every cell of :func:`casebook.releases.version_table` there: a later ask for the
same cell, from any worker or kernel, reads the outcome instead of running it again.

The same cell means the same code on the same files with the same options and
environment: the key holds the code, the release's label, interpreter and folders (a
patched release's folder is named by its patch's content), the run's options, the
environment (all but the variables that differ between processes of one run), the
lock's hash and casebook's own source. The folder goes with the run, so each suite run
computes each cell once, fresh; a changed lock or source computes it again. Outside the
test command nothing is kept. Only outcomes are kept: a run that times out or crashes
raises each time it is asked.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from casebook import lock, storage
from casebook.releases._keys import PER_PROCESS, source_digest
from casebook.releases._outcome import Outcome
from casebook.releases._patches import Target
from casebook.releases._runner import place_of
from casebook.runenv import GRID_MEMO_ENV

__all__ = ["MEMO_ENV", "cell_key", "lock_digest", "run_once"]

MEMO_ENV = GRID_MEMO_ENV
"""Names the folder of the run's kept cells (the test command sets it); unset, nothing is
kept."""


@functools.cache
def lock_digest() -> str:
    """The hash of the lock (both of its files and ``pyproject.toml``)."""
    return lock.lock_digest([lock.REQUIREMENTS, lock.GPU_REQUIREMENTS])


def cell_key(code: str, target: Target, run_kwargs: dict[str, Any]) -> str:
    """The key of one cell: everything its outcome can depend on (see the module's text)."""
    place = place_of(target)
    env = sorted((k, v) for k, v in os.environ.items() if not PER_PROCESS.match(k))
    text = json.dumps(
        [
            code,
            place.label,
            place.python,
            [str(p) for p in place.path],
            sorted(run_kwargs.items()),
            env,
            lock_digest(),
            source_digest(),
        ],
        default=repr,
    )
    return hashlib.sha256(text.encode()).hexdigest()


def run_once(run: Callable[..., Outcome], code: str, target: Target, **run_kwargs: Any) -> Outcome:
    """``run(code, target, **run_kwargs)``, or the outcome this suite run already got for
    the same cell (:func:`cell_key`), while ``CASEBOOK_GRID_MEMO`` is set."""
    folder = os.environ.get(MEMO_ENV)
    if not folder:
        return run(code, target, **run_kwargs)
    path = Path(folder) / f"{cell_key(code, target, run_kwargs)}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        return Outcome(**json.loads(path.read_text()))
    outcome = run(code, target, **run_kwargs)
    storage.write_text(path, json.dumps(dataclasses.asdict(outcome)))
    return outcome

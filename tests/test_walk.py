"""One pass per call: a ``%%on_release`` cell enters each module at most once.

The walk of one cell, on the current stack, on a release and in an era: the magic asks the
runner, the runner resolves the target in one call (eras, or patches and the manifest),
the pool runs the child once, and the outcome comes back to the magic, which shows it and
asserts it. The test records every call that crosses from one ``casebook`` file into
another (``sys.setprofile``) and fails on a file entered twice. CONTRIBUTING.md ("The
map") says the walk.
"""

from __future__ import annotations

import collections
import sys
from pathlib import Path

import pytest

from casebook.project import PACKAGE
from casebook.releases import _magic

READS_PAGES = False


def walk(line: str, cell: str) -> list[tuple[str, str, str]]:
    """``(caller file, entered file, function)`` of each call that enters a casebook file
    from another file, in order, while the magic runs ``cell``."""
    steps: list[tuple[str, str, str]] = []

    def name(filename: str) -> str | None:
        path = Path(filename)
        return path.relative_to(PACKAGE).as_posix() if path.is_relative_to(PACKAGE) else None

    def profile(frame, event, arg):  # noqa: ARG001
        if event != "call":
            return
        entered = name(frame.f_code.co_filename)
        caller = name(frame.f_back.f_code.co_filename) if frame.f_back else None
        if entered and caller != entered:
            steps.append((caller or "-", entered, frame.f_code.co_name))

    sys.setprofile(profile)
    try:
        _magic.on_release(line, cell, {})
    finally:
        sys.setprofile(None)
    return steps


@pytest.mark.parametrize("target", ["current", "optax==0.1.9", "era:optax-828"])
def test_a_cell_enters_each_module_once(target):
    cell = "import optax\nresult = 1"
    walk(f"{target} --ok", cell)  # the first call starts the warm server
    steps = walk(f"{target} --ok", cell)
    entered = collections.Counter(file for _, file, _ in steps)
    twice = {file: n for file, n in entered.items() if n > 1}
    assert not twice, f"entered more than once: {twice}\n" + "\n".join(map(str, steps))
    assert entered["releases/_runner.py"] == 1 and entered["releases/_pool.py"] == 1

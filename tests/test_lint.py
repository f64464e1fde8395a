"""The code is formatted, linted and type-checked: ruff over casebook/, tests/ and the
executed pages, mypy over casebook/ (configured in ruff.toml and mypy.ini)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from casebook.tools import environment

ROOT = environment.ROOT


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True)


@pytest.mark.parametrize(
    "command",
    [
        ("ruff", "check", "casebook", "tests", "notebooks", "book"),
        ("ruff", "format", "--check", "casebook", "tests"),
        ("mypy",),
    ],
    ids=["ruff check", "ruff format", "mypy"],
)
def test_clean(command):
    proc = _run(*command)
    assert proc.returncode == 0, f"`{' '.join(command)}` found:\n{proc.stdout}{proc.stderr}"

"""The code is formatted, linted and type-checked: ruff over casebook/ and tests/, mypy over
casebook/ (configured in ruff.toml and mypy.ini), and the folders keep their import contract
(``.importlinter``: the arrows point one way). The pages' code is linted by
``tests/test_notebooks.py``, so an edit to a page's text re-runs none of these."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from casebook.maintainer.tools import environment

ROOT = environment.ROOT

READS_PAGES = False


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True)


@pytest.mark.parametrize(
    "command",
    [
        ("ruff", "check", "casebook", "tests", "conftest.py"),
        ("ruff", "format", "--check", "casebook", "tests"),
        ("mypy",),
    ],
    ids=["ruff check", "ruff format", "mypy"],
)
def test_clean(command):
    proc = _run(*command)
    assert proc.returncode == 0, f"`{' '.join(command)}` found:\n{proc.stdout}{proc.stderr}"


_LINT_IMPORTS = "from importlinter.cli import lint_imports_command; lint_imports_command()"


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` over the ``casebook`` package found in ``root``."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(
        [sys.executable, "-c", _LINT_IMPORTS, "--no-cache"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )


def test_the_folders_keep_their_import_contract():
    proc = _lint_imports(ROOT)
    assert proc.returncode == 0, f"lint-imports found:\n{proc.stdout}{proc.stderr}"
    assert "1 kept, 0 broken" in proc.stdout


def test_an_upward_import_breaks_the_contract(tmp_path):
    """A planted import from a low folder (trace) up to the status board must fail."""
    shutil.copytree(
        ROOT / "casebook", tmp_path / "casebook", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(ROOT / ".importlinter", tmp_path / ".importlinter")
    planted = tmp_path / "casebook" / "trace" / "__init__.py"
    planted.write_text(planted.read_text() + "\nfrom casebook.status import board  # noqa\n")
    proc = _lint_imports(tmp_path)
    assert proc.returncode != 0
    assert "casebook.trace -> casebook.status.board" in proc.stdout, proc.stdout


MAX_MODULE_LINES = 450
"""No module of the package is longer (CONTRIBUTING.md, "The map"): a longer one holds
more than one concern, or data that belongs in its case folder's files."""


def test_no_module_is_longer_than_the_limit():
    long = {
        p.relative_to(ROOT).as_posix(): n
        for p in sorted((ROOT / "casebook").rglob("*.py"))
        if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"

"""Plain ``pytest`` collects the same things from any state of the checkout.

After a book build or a Colab simulation, ``_build/`` holds copies of the pages and whole
venvs; ``.venv`` and the caches hold other people's tests. None of them may be collected
(``testpaths`` and ``norecursedirs`` in ``pyproject.toml``).
"""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from casebook.project import ROOT

READS_PAGES = False

LITTER = (
    "_build/colab-sim/notebooks/test_x.py",
    "_build/jupyter_execute/tests/test_w.py",
    ".venv/lib/test_y.py",
    ".casebook-cache/t/test_z.py",
    ".casebook-latest/tests/test_v.py",
)


@pytest.mark.parametrize("args", [[], ["."]], ids=["pytest", "pytest ."])
def test_plain_pytest_collects_nothing_from_the_build_or_the_caches(tmp_path, args):
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_real.py").write_text("def test_real():\n    pass\n")
    for litter in LITTER:
        path = tmp_path / litter
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("def test_litter():\n    raise AssertionError('collected')\n")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    collected = [line for line in proc.stdout.splitlines() if "::" in line]
    assert collected == ["tests/test_real.py::test_real"], proc.stdout

"""The lessons page depends on every family of ``check_optimizer``.

The page shows each family on a case and asserts what the check reports; with a family
switched off (``CASEBOOK_CHECK_OFF``, which drops its findings from every report), some
cell of the page must fail. One run of the page per family.
"""

from __future__ import annotations

import os
import subprocess
import sys
import typing

import pytest

from casebook.check._check import SWITCH_OFF_ENV
from casebook.check._report import Family
from casebook.project import ROOT

PAGE = "book/lessons.ipynb"


@pytest.mark.parametrize("family", typing.get_args(Family))
def test_the_lessons_page_fails_without_each_family(family):
    env = {**os.environ, SWITCH_OFF_ENV: family}
    env.pop("CASEBOOK_SUITE_LOCK", None)  # the page runs alone in its own pytest
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--nbmake", "-q", "-p", "no:cacheprovider", PAGE],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode != 0, f"the lessons page passed with {family!r} switched off"
    assert "AssertionError" in proc.stdout or "Error" in proc.stdout, proc.stdout[-2000:]

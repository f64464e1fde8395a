"""The unit tests' record: kept while no file of the checkout changes, never for a test
that failed, ignored by a fresh run."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from casebook.tools import testrecord


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("_build/\n")
    (tmp_path / "page.ipynb").write_text("{}\n")
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("CASEBOOK_FRESH", raising=False)
    return tmp_path


def _held(root: Path) -> set[str]:
    testrecord.checkout_digest.cache_clear()
    return testrecord.passed_on_record(root)[0]


@pytest.mark.parametrize("change", ["page.ipynb", "new_untracked.py"])
def test_any_file_of_the_checkout_changed_empties_the_record(checkout, change):
    testrecord.record(checkout, {"t::a", "t::b"}, {"t::b"})
    assert _held(checkout) == {"t::a"}
    (checkout / change).write_text("changed\n")
    assert _held(checkout) == set()


def test_what_git_ignores_keeps_it_and_a_fresh_run_ignores_it(checkout, monkeypatch):
    testrecord.record(checkout, {"t::a"}, set())
    (checkout / "_build" / "other.txt").write_text("built\n")
    assert _held(checkout) == {"t::a"}
    monkeypatch.setenv("CI", "true")
    assert _held(checkout) == set()


def test_a_later_run_adds_its_passes_and_drops_its_failures(checkout):
    testrecord.record(checkout, {"t::a", "t::b"}, set())
    testrecord.checkout_digest.cache_clear()
    testrecord.record(checkout, {"t::c"}, {"t::a"})
    assert _held(checkout) == {"t::b", "t::c"}

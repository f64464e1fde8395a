"""The unit tests' record: kept while no file the test may read changed, never for a test
that failed, ignored by a fresh run; a module that declares it reads no page keeps its
record across a page's edit, and is refused a page's text while it runs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from casebook.maintainer.tools import testrecord
from casebook.project import ROOT

READS_PAGES = False

ALL, NOT_PAGES = testrecord.EVERYTHING, testrecord.NOT_PAGES


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("_build/\n")
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "01-a.ipynb").write_text("{}\n")
    (tmp_path / "locale").mkdir()
    (tmp_path / "locale" / "01-a.po").write_text('msgid "a"\n')
    (tmp_path / "module.py").write_text("x = 1\n")
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("CASEBOOK_FRESH", raising=False)
    return tmp_path


def _held(root: Path) -> set[str]:
    testrecord.checkout_digests.cache_clear()
    return set(testrecord.passed_on_record(root))


@pytest.mark.parametrize("change", ["notebooks/01-a.ipynb", "module.py", "new_untracked.py"])
def test_any_file_of_the_checkout_changed_empties_the_record(checkout, change):
    testrecord.record(checkout, {"t::a": ALL, "t::b": ALL}, {"t::b"})
    assert _held(checkout) == {"t::a"}
    (checkout / change).write_text("changed\n")
    assert _held(checkout) == set()


def test_a_page_s_text_keeps_only_the_tests_that_read_no_page(checkout):
    testrecord.record(checkout, {"t::reads": ALL, "t::no_pages": NOT_PAGES}, set())
    (checkout / "notebooks" / "01-a.ipynb").write_text('{"edited": 1}\n')
    assert _held(checkout) == {"t::no_pages"}
    (checkout / "locale" / "01-a.po").write_text('msgid "a, as sync merged the edit"\n')
    assert _held(checkout) == {"t::no_pages"}  # the page's catalog is its text too
    (checkout / "notebooks" / "02-b.md").write_text("a new page\n")
    assert _held(checkout) == set()


def test_a_module_that_names_its_pages_is_proved_again_when_one_of_them_changes(checkout):
    own = testrecord.AND.join([NOT_PAGES, "notebooks/01-a.ipynb"])
    (checkout / "notebooks" / "02-b.ipynb").write_text("{}\n")
    testrecord.record(checkout, {"t::own": own, "t::reads": ALL}, set())
    (checkout / "notebooks" / "02-b.ipynb").write_text('{"edited": 1}\n')
    assert _held(checkout) == {"t::own"}  # another page's edit
    (checkout / "notebooks" / "01-a.ipynb").write_text('{"edited": 1}\n')
    assert _held(checkout) == set()  # its own


def test_a_module_that_names_its_pages_may_open_those_alone(monkeypatch, pytestconfig):
    """The audit hook of the test command's ``conftest.py``, as a module that declares one
    page sets it: that page opens, another page is refused."""
    root_conftest = pytestconfig.pluginmanager.get_plugin(str(ROOT / "conftest.py"))
    first, second = sorted((ROOT / "notebooks").glob("*.ipynb"))[:2]
    monkeypatch.setattr(root_conftest, "_pages_allowed", [frozenset({f"notebooks/{first.name}"})])
    assert first.read_text()
    with pytest.raises(PermissionError, match=f"READS_PAGES = notebooks/{first.name}"):
        second.read_text()


def test_what_git_ignores_keeps_it_and_a_fresh_run_ignores_it(checkout, monkeypatch):
    testrecord.record(checkout, {"t::a": ALL}, set())
    (checkout / "_build" / "other.txt").write_text("built\n")
    assert _held(checkout) == {"t::a"}
    monkeypatch.setenv("CI", "true")
    assert _held(checkout) == set()


def test_a_later_run_adds_its_passes_and_drops_its_failures(checkout):
    testrecord.record(checkout, {"t::a": ALL, "t::b": ALL}, set())
    testrecord.checkout_digests.cache_clear()
    testrecord.record(checkout, {"t::c": NOT_PAGES}, {"t::a"})
    assert _held(checkout) == {"t::b", "t::c"}


def test_a_kept_site_is_emptied_when_more_than_the_pages_text_changed(checkout, monkeypatch):
    site = checkout / "_build" / "site"

    def build() -> None:
        testrecord.checkout_digests.cache_clear()
        (testrecord.kept_folder(checkout, site) / "page.html").touch()
        testrecord.keep(checkout, site)

    def kept() -> bool:
        testrecord.checkout_digests.cache_clear()
        return (testrecord.kept_folder(checkout, site) / "page.html").exists()

    build()
    (checkout / "notebooks" / "01-a.ipynb").write_text('{"edited": 1}\n')
    assert kept()  # a page edited: Sphinx reads it again itself
    assert not kept()  # asked again without a build recorded (it failed): emptied
    build()
    (checkout / "module.py").write_text("x = 2\n")
    assert not kept()
    build()
    monkeypatch.setenv("CASEBOOK_FRESH", "1")
    assert not kept()


def test_a_record_of_the_older_format_is_no_record(checkout):
    (checkout / "_build").mkdir()
    (checkout / "_build" / testrecord.RECORD).write_text('{"inputs": "x", "passed": ["t::a"]}')
    assert _held(checkout) == set()
    testrecord.record(checkout, {"t::b": ALL}, set())
    assert _held(checkout) == {"t::b"}


def test_this_module_declares_it_reads_no_page_and_is_refused_one():
    page = next((ROOT / "notebooks").glob("*.ipynb"))
    with pytest.raises(PermissionError, match="READS_PAGES = False"):
        page.read_text()
    assert (ROOT / "pyproject.toml").read_text()

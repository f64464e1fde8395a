"""casebook.maintainer.tools.latest: what the newest-releases watch reads, and how it decides."""

from __future__ import annotations

from casebook import lock
from casebook.maintainer.tools import latest

READS_PAGES = False


def test_failed_pages_are_read_from_the_junit_report(tmp_path):
    junit = tmp_path / "pages.xml"
    junit.write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="notebooks" name="01-a.ipynb"/>'
        '<testcase classname="notebooks" name="02-b.ipynb"><failure message="x"/></testcase>'
        '<testcase classname="book" name="status.ipynb"><error message="y"/></testcase>'
        "</testsuite></testsuites>"
    )
    assert latest._failed_pages(junit) == ["02-b.ipynb", "status.ipynb"]


def test_the_watch_compares_with_the_lock_versions():
    locked = lock.locked_versions(latest.WATCHED)
    assert set(locked) == set(latest.WATCHED)

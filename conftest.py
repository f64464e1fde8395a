"""Pytest wiring of the test command: benchmark cells time alone (:mod:`casebook.maintainer.tools.suite`),
and a page is proved again only when what its run reads has changed.

Every unit test holds the suite lock shared for its whole run, set-up and tear-down of its
fixtures included (a module's fixture that builds HTML or fetches wheels is work too); every
cell of a page (run by nbmake through nbclient) holds it shared, or exclusively if the cell
is tagged ``benchmark``. The lock is off unless ``CASEBOOK_SUITE_LOCK`` is set, as the test
command does.

Under the test command, every page that passes is recorded (:func:`casebook.maintainer.tools.buildcache.
store_executed`): its outputs go into the book's execution cache, so the book build after
the tests executes nothing, with the digest of every input its run read. A page whose record
matches its inputs today is not run again: it is reported as passed from its record, with
the record's date (``PASSED (record of …)``, and a summary at the end), as Bazel reports a
cached test. ``--fresh`` (``CASEBOOK_FRESH``) or ``CI=true`` prove every page again.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from _pytest.reports import TestReport
from nbmake.nb_result import NotebookResult
from nbmake.nb_run import NotebookRun

from casebook.maintainer.tools import buildcache, suite, testrecord
from casebook.project import ROOT

RECORD = "record"
"""The user property of a report that came from its record: the record's date."""
INPUTS = "inputs"
"""The user property of a unit test's report: the key it is recorded under
(:func:`casebook.maintainer.tools.testrecord.kind_of`)."""

_from_record: dict[str, str] = {}
_unit_record: dict[str, tuple[str, str]] = {}
_passed: dict[str, str] = {}
_failed: set[str] = set()
_pages_allowed: list[frozenset[str] | None] = [None]
"""The pages the unit test running in this process may open: those its module declares
(``READS_PAGES``: none, or a tuple of pages), or None (any); opening another page's text is
refused."""


def _refuse_page_reads(event: str, args: tuple[Any, ...]) -> None:
    """An audit hook: inside a test whose module declares it reads no page, opening a
    page's text under the checkout raises (the declaration narrows the test's record)."""
    allowed = _pages_allowed[0]
    if event != "open" or allowed is None or not isinstance(args[0], str | Path):
        return
    path = Path(os.path.abspath(args[0]))
    name = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else ""
    if testrecord.is_page_text(name) and name not in allowed:
        declared = ", ".join(sorted(allowed)) or "False"
        raise PermissionError(
            f"{name} is a page's text, and this test module declares READS_PAGES = "
            f"{declared} (casebook/maintainer/tools/testrecord.py): declare it, or remove "
            "the declaration"
        )


sys.addaudithook(_refuse_page_reads)


def _page(nodeid: str) -> bool:
    return nodeid.split("::")[0].endswith(".ipynb")


def pytest_sessionstart(session: pytest.Session) -> None:
    """Under the test command: the checkout's digest as the run starts (what the unit
    tests' record is keyed by, :mod:`casebook.maintainer.tools.testrecord`), and the tests it holds."""
    global _unit_record
    if os.environ.get(suite.LOCK_ENV):
        _unit_record = testrecord.passed_on_record(ROOT)


class _FromRecord:
    """The plugin that reports a unit test from the record (a module can define a hook
    once, and this module's ``pytest_runtest_protocol`` holds the suite lock)."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(
        self, item: pytest.Item, nextitem: pytest.Item | None
    ) -> bool | None:
        """A unit test that passed on the checkout as it is now is reported from the
        record, not run: its set-up, call and tear-down say passed, the call with the date."""
        kind = testrecord.kind_of(getattr(item, "module", None))
        kind_on_record, date = _unit_record.get(item.nodeid, ("", ""))
        if kind_on_record != kind or _page(item.nodeid):
            return None
        item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        for when in ("setup", "call", "teardown"):
            properties = [(RECORD, date), (INPUTS, kind)] if when == "call" else []
            report = TestReport(
                item.nodeid, item.location, {}, "passed", None, when, user_properties=properties
            )
            item.ihook.pytest_runtest_logreport(report=report)
        # what the last test that ran set up and the next one does not share is torn down,
        # as pytest's own tear-down of this item would (a module's fixtures, at its end)
        item.session._setupstate.teardown_exact(nextitem)
        item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        return True


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_FromRecord(), "casebook-from-record")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """The unit tests that passed and failed in this run (in the main process, which sees
    every worker's reports)."""
    if not _page(report.nodeid):
        if report.failed:
            _failed.add(report.nodeid)
        elif report.when == "call" and report.passed:
            _passed[report.nodeid] = str(dict(report.user_properties).get(INPUTS))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Under the test command, a run that was not interrupted records its unit tests."""
    main = not hasattr(session.config, "workerinput")
    if main and os.environ.get(suite.LOCK_ENV) and exitstatus != pytest.ExitCode.INTERRUPTED:
        testrecord.record(ROOT, _passed, _failed)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """A unit test shares the machine from its first fixture to its last tear-down. A page
    (an nbmake item) is left to its cells, which take the lock one by one."""
    if isinstance(item, pytest.Function):
        _pages_allowed[0] = testrecord.pages_allowed(testrecord.kind_of(item.module))
        try:
            with suite.shared():
                yield
        finally:
            _pages_allowed[0] = None
    else:
        yield


suite.lock_cells()


_run_page = NotebookRun.execute


@functools.wraps(_run_page)
def _run_page_or_take_its_record(self: NotebookRun) -> Any:
    """Under the test command: a page with a green record for today's inputs is taken from
    it; any other page runs, and is recorded if it passes."""
    page = Path(self.filename)
    if not os.environ.get(suite.LOCK_ENV):
        return _run_page(self)
    result, date = buildcache.run_or_take_record(ROOT, page, lambda: _run_page(self))
    if date is None:
        return result
    _from_record[str(page.resolve())] = date
    return NotebookResult(nb=nbformat.read(page, as_version=4), error=None)


NotebookRun.execute = _run_page_or_take_its_record


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[Any]:
    """A page taken from its record says so in its report (which xdist carries to the
    main process): the record's date, as a user property."""
    outcome: Any = yield
    date = _from_record.get(str(Path(getattr(item, "filename", "")).resolve()))
    if call.when == "call" and date:
        outcome.get_result().user_properties.append((RECORD, date))
    if call.when == "call" and isinstance(item, pytest.Function):
        kind = testrecord.kind_of(item.module)
        outcome.get_result().user_properties.append((INPUTS, kind))


def _record_date(report: pytest.TestReport) -> str | None:
    date = dict(report.user_properties).get(RECORD) if report.when == "call" else None
    return str(date) if date else None


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> Any:
    """``PASSED (record of DATE)`` (``r`` in the dots) for a page taken from its record."""
    date = _record_date(report)
    if date and report.passed:
        return "passed", "r", (f"PASSED (record of {date})", {"green": True})
    return None


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Which pages and how many unit tests came from their records (the rest ran)."""
    reports = [r for r in terminalreporter.stats.get("passed", []) if r.when == "call"]
    recorded = [(r.nodeid, _record_date(r)) for r in reports if _record_date(r)]
    if not recorded:
        return
    terminalreporter.section("from their records (inputs unchanged; --fresh proves them)")
    pages = [(n, d) for n, d in recorded if _page(n)]
    for nodeid, date in pages:
        terminalreporter.line(f"{nodeid}: PASSED (record of {date})")
    units = [d for n, d in recorded if not _page(n)]
    if units:
        terminalreporter.line(f"{len(units)} unit tests: PASSED (record of {units[0]})")
    ran = [r.nodeid for r in reports if _page(r.nodeid) and not _record_date(r)]
    terminalreporter.line(f"pages proved in this run: {', '.join(ran) or 'none'}")

"""The Errors page: generated from the registry (``Case.messages``), every message verbatim
under its heading. That each message is what its stack prints, and where ``explain``
lands it, is proved from the registry itself, in ``test_messages.py``, which reads no
page and so is not run again when only a page's words change.
"""

from __future__ import annotations

from casebook import cases, explain as _explain
from casebook.maintainer.sync import errorspage

MESSAGES = [(case, m) for case in cases.CASES for m in case.messages]


def test_every_case_has_messages_and_today_s_wording_where_it_still_fails():
    for case in cases.CASES:
        # a bug of a kind that raises nothing (case 6, a leak) has no wording
        assert case.messages or not case.raises, f"{case.key} lists no message"
        assert case.do_this[1] and case.why and case.still_open, (
            f"{case.key}: the card's data is missing"
        )


def test_the_errors_page_is_generated_from_the_registry():
    assert errorspage.PAGE.read_text() == errorspage.page_text(), (
        "book/errors.md is out of date: run `python3 -m casebook sync`"
    )


def test_every_bug_that_raises_nothing_is_listed_by_its_symptom_and_linked():
    """A case whose card's symptom is not an error (a leak) has a line in the Errors page's
    "No message" section (``[[quiet]]`` of ``families.toml``), linked to its card."""
    page = errorspage.PAGE.read_text()
    quiet = page[page.index("## No message") : page.index("## Family 1")]
    silent = [c for c in cases.CASES if not c.raises]
    assert silent, "a case that raises nothing is the reason for the section"
    for case in silent:
        assert f"]({errorspage._page(case)})" in quiet, case.key


def test_the_errors_page_holds_every_message_verbatim():
    page = errorspage.PAGE.read_text()
    for _, message in MESSAGES:
        assert message.text in page


def test_each_heading_shows_its_message_verbatim():
    """A heading is a code span: Markdown would read ``Net.__call__()`` as bold and drop
    ``<locals>`` and ``<lambda>`` as tags."""
    import re

    headings = [h for h in errorspage.PAGE.read_text().splitlines() if h.startswith("#### ")]
    spans = [re.fullmatch(r"#### (`+) ?(.+?) ?\1(?: \(today\))?", h) for h in headings]
    assert headings and all(spans), [h for h, s in zip(headings, spans) if not s]
    firsts = {f"{m.exc_type}: {m.text.splitlines()[0]}" for c in cases.CASES for m in c.messages}
    for span in spans:
        shown = span[2].removesuffix("...")
        assert any(first.startswith(shown) for first in firsts), shown
    assert any("<locals>" in span[2] for span in spans)


def test_a_wording_any_code_prints_is_listed_but_not_answered_alone():
    generic = [m for _, m in MESSAGES if not m.distinctive]
    for message in generic:
        assert message.text in errorspage.PAGE.read_text()
        assert _explain.find(f"{message.exc_type}: {message.text}") == []

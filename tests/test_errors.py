"""The Errors page, ``explain`` and the IPython hint: one source, each message proven.

Every message of the registry (``Case.messages``) is produced here by running its code on
its stack; the Errors page (``book/errors.md``) is generated from the same data and must be
in sync; ``python3 -m casebook explain`` lands each message on its own case, and a message
from another library on none.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from casebook import cases, explain as _explain, releases
from casebook.maintainer.sync import errorspage
from casebook.project import ROOT

MESSAGES = [(case, m) for case in cases.CASES for m in case.messages]
DISTINCTIVE = [(case, m) for case, m in MESSAGES if m.distinctive]


def _id(cm) -> str:
    case, message = cm
    return f"{case.key}:{message.stack}:{message.text[:30]}"


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


@pytest.mark.parametrize("cm", MESSAGES, ids=_id)
def test_each_message_is_what_its_stack_prints(cm):
    _, message = cm
    outcome = releases.run(message.code, message.stack, timeout=300)
    assert not outcome.ok, f"{message.stack}: the code ran without an exception"
    assert message.exc_type in outcome.exc_types, outcome.summary
    printed = _explain.normalize(outcome.message)
    assert printed.startswith(_explain.normalize(message.text)), (
        f"{message.stack} printed:\n{outcome.message[:1500]}"
    )


@pytest.mark.parametrize("cm", DISTINCTIVE, ids=_id)
def test_explain_lands_each_message_on_its_case(cm):
    """The card of the message's case is among the answers (a wording two cases share,
    such as one jax message through lax.cond, answers with both cards)."""
    case, message = cm
    traceback = f"Traceback (most recent call last):\n  ...\n{message.exc_type}: {message.text}\n"
    assert _explain.find(traceback), "no card"
    answer = _explain.explain(traceback)
    assert case.issue.label in answer and case.do_this[1].strip().splitlines()[0] in answer


@pytest.mark.parametrize(
    "foreign",
    [
        "ValueError: math domain error",
        "TypeError: unsupported operand type(s) for +: 'int' and 'str'",
        "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB",
    ],
)
def test_a_message_from_elsewhere_lands_on_no_card(foreign):
    assert _explain.find(foreign) == []
    proc = subprocess.run(
        [sys.executable, "-m", "casebook", "explain", foreign], capture_output=True, text=True
    )
    assert proc.returncode == 1 and "Errors page" in proc.stdout


def test_a_wording_any_code_prints_is_listed_but_not_answered_alone():
    generic = [m for _, m in MESSAGES if not m.distinctive]
    for message in generic:
        assert message.text in errorspage.PAGE.read_text()
        assert _explain.find(f"{message.exc_type}: {message.text}") == []


def test_the_command_reads_a_traceback_from_standard_input():
    case, message = DISTINCTIVE[0]
    proc = subprocess.run(
        [sys.executable, "-m", "casebook", "explain"],
        input=f"{message.exc_type}: {message.text}\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 0 and case.issue.label in proc.stdout


def test_the_ipython_hint_adds_one_line_and_keeps_the_traceback(capsys, shell):
    case, message = DISTINCTIVE[0]
    _explain.load_ipython_extension(shell)
    error = TypeError(message.text)
    shell.handler(shell, TypeError, error, None)
    assert shell.shown == [(TypeError, error, None)]  # the traceback, unchanged
    assert case.issue.label in capsys.readouterr().out
    shell.handler(shell, ValueError, ValueError("math domain error"), None)
    assert capsys.readouterr().out == ""  # nothing for a message the book does not know


def test_the_book_url_is_the_one_the_book_is_published_at():
    assert f"baseurl: {_explain.BOOK_URL}" in (ROOT / "_config.yml").read_text()

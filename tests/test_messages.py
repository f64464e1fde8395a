"""Each message of the registry (``Case.messages``), the one source of the Errors page,
``explain`` and the IPython hint: produced by running its code on its stack; landed by
``python3 -m casebook explain`` on its own case, and a message from another library on
none. No page is read here (``READS_PAGES``), so a page's edit does not run the stacks again.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from casebook import cases, explain as _explain, releases
from casebook.project import ROOT

READS_PAGES = False

MESSAGES = [(case, m) for case in cases.CASES for m in case.messages]
DISTINCTIVE = [(case, m) for case, m in MESSAGES if m.distinctive]


def _id(cm) -> str:
    case, message = cm
    return f"{case.key}:{message.stack}:{message.text[:30]}"


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

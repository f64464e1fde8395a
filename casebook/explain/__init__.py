"""Which case answers an error: ``python3 -m casebook explain`` and ``%load_ext casebook``.

Like ``rustc --explain``, but read from the traceback itself. Both read the registry's
messages (:class:`~casebook.cases.Message`, the data the Errors page is made from), so the
terminal, the notebook and the book give the same answer: the case, the wording today's
releases print, the fix as code, and the link to the page's proof.

Standard library only: ``explain`` runs before anything else is installed, and the IPython
extension costs nothing until a cell raises.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from casebook.cases import CASES, normalize
from casebook.cases._base import Case, Message
from casebook.project import BOOK_URL

__all__ = ["BOOK_URL", "ERRORS_PAGE", "card", "find", "load_ipython_extension", "main", "normalize"]


ERRORS_PAGE = BOOK_URL + "book/errors.html"


def find(text: str, cases: Iterable[Case] = CASES) -> list[tuple[Case, Message]]:
    """The known messages that ``text`` (a traceback, or a message) contains, the longest
    first; empty when none does."""
    seen = normalize(text)
    found = [
        (case, message)
        for case in cases
        for message in case.messages
        if message.distinctive and normalize(message.text) in seen
    ]
    return sorted(found, key=lambda cm: -len(cm[1].text))


def url(case: Case, anchor: str = "") -> str:
    """The published page of ``case``, at ``anchor``."""
    return BOOK_URL + case.docname + ".html" + (f"#{anchor}" if anchor else "")


def card(case: Case, message: Message) -> str:
    """The answer, as text: the case, what was matched, today's wording, the fix, why."""
    today = case.today
    now = (
        f"    {today[0].exc_type}: {today[0].text.splitlines()[0]}  ({today[0].versions})"
        if today
        else "    (today's releases no longer raise it)"
    )
    lines = [
        f"{case.issue.label} (case {case.number}): {case.summary.replace('`', '')}",
        f"  you hit: {message.exc_type}: {message.text.splitlines()[0]}",
        f"           ({message.versions}; through {message.api})",
        "  today:",
        now,
    ]
    language, do = case.do_this
    if do:
        said = case.card.get("do", "runs on today's releases")
        lines += [f"  do this ({said}):", textwrap.indent(do.strip(), "    ")]
    if case.why:
        lines += ["  why:", textwrap.indent(textwrap.fill(case.why, 88), "    ")]
    if case.still_open:
        lines += ["  still open:", textwrap.indent(textwrap.fill(case.still_open, 88), "    ")]
    lines.append(f"  the proof: {url(case, message.anchor)}")
    return "\n".join(lines)


def explain(text: str) -> str:
    """The cards of every known message in ``text``, or where to look instead."""
    found = find(text)
    if not found:
        return (
            "casebook explain: no known message in this text. Every message the book knows "
            f"is on the Errors page: {ERRORS_PAGE}"
        )
    # The longest wording matched; where cases share it (the same jax message through the
    # same API), one card per case.
    longest = len(found[0][1].text)
    cards, shown = [], set()
    for case, message in found:
        if len(message.text) == longest and case.key not in shown:
            shown.add(case.key)
            cards.append(card(case, message))
    return "\n\n".join(cards)


def main(argv: list[str]) -> int:
    """``python3 -m casebook explain [TEXT | --file F]``, or the text on standard input;
    exit 0 when a card matched, 1 when none did."""
    parser = argparse.ArgumentParser(
        prog="python3 -m casebook explain",
        description="Read a traceback or an error message; print the case that explains it.",
    )
    parser.add_argument("text", nargs="*", help="the message (default: read standard input)")
    parser.add_argument("--file", type=Path, help="read the traceback from this file")
    args = parser.parse_args(argv)
    if args.file:
        text = args.file.read_text()
    elif args.text:
        text = " ".join(args.text)
    else:
        text = sys.stdin.read()
    print(explain(text))
    return 0 if find(text) else 1


def _hint(etype: type[BaseException], value: BaseException) -> str | None:
    found = find(f"{etype.__name__}: {value}")
    if not found:
        return None
    case, message = found[0]
    return (
        f"casebook: this is {case.issue.label} (case {case.number}, {message.versions}); "
        f"the fix is on its card: {url(case)} "
        "(or run `python3 -m casebook explain` on the traceback)"
    )


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext casebook``: under a traceback whose message the book knows, one line
    says which case it is and where the fix is. The traceback is shown as IPython shows
    it, unchanged; nothing runs until a cell raises."""

    def handler(shell: Any, etype: Any, value: Any, tb: Any, tb_offset: Any = None) -> Any:
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
        hint = _hint(etype, value)
        if hint:
            print(hint)
        return None

    ipython.set_custom_exc((Exception,), handler)

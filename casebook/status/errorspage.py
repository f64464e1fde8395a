"""``book/errors.md``: every message the book asserts, verbatim, generated from the registry.

A reader who pastes an error into the book's search (or a web search) lands here: each
message is page text (not a cell's output), with the releases that print it, the call it
came through, and links to the case's proof and fix. The page is written from the
registry's :class:`~casebook.cases.Message` entries, the same data ``python3 -m casebook
explain`` reads; ``tests/test_errors.py`` runs each message's code on its stack and checks
that it prints the text the page shows, and that the page is in sync.

``python3 -m casebook sync`` writes the page (:func:`page_text`).
"""

from __future__ import annotations

from collections.abc import Iterable

from casebook.cases import CASES, Case, Message
from casebook.project import ROOT

__all__ = ["PAGE", "page_text"]

PAGE = ROOT / "book" / "errors.md"

_INTRO = """\
# Errors

Every error message this book asserts, verbatim, as the releases named beside it print it:
the wordings of each case's own bug on the stack of the report and on today's releases, and
the messages the same mistakes give through neighbouring APIs. Search for a fragment of
yours (the book's search box, or your browser's find). Each message links to the case
section that produces and asserts it, and to the case's card, whose first screen says what
to do. From a terminal, `python3 -m casebook explain` reads a whole traceback and prints the
same answer; in IPython or Jupyter, `%load_ext casebook` adds it under a matching traceback.

Each message below is produced by running its code on its stack (`tests/test_errors.py`),
so a wording that changes fails the book's tests before this page can go stale.
"""


def _stack(stack: str) -> str:
    if stack == "current":
        return "today's releases (the lock)"
    if stack.startswith("era:"):
        return f"the reporter's stack (`{stack}`)"
    return f"`{stack}` on today's jax"


def _group(case: Case, same: list[Message]) -> str:
    """One wording, shown once, with every release and call that prints it."""
    first = same[0]
    title = first.text.splitlines()[0]
    short = title if len(title) <= 90 else title[:87] + "..."
    today = " (today)" if any(m.today for m in same) else ""
    where = [
        f"- {m.versions}, on {_stack(m.stack)}; raised through {m.api}. "
        f"{{ref}}`The proof <{m.anchor}>`."
        for m in same
    ]
    return "\n".join(
        [
            f"### {first.exc_type}: {short}{today}",
            "",
            "```text",
            f"{first.exc_type}: {first.text}",
            "```",
            "",
            *where,
            f"- [The fix]({_page(case)}): the case's card.",
            "",
        ]
    )


def _groups(case: Case) -> list[list[Message]]:
    """The case's messages, one group per distinct wording, in the registry's order."""
    groups: dict[tuple[str, str], list[Message]] = {}
    for message in case.messages:
        groups.setdefault((message.exc_type, message.text), []).append(message)
    return list(groups.values())


def _page(case: Case) -> str:
    """The case's page, relative to ``book/``."""
    return f"../{case.docname}.ipynb"


def _case(case: Case) -> str:
    head = [
        f"## Case {case.number}: {case.issue.label}",
        "",
        f"{case.summary}. [The case]({_page(case)}) · [upstream]({case.issue.url})",
        "",
        "",
    ]
    return "\n".join(head) + "\n".join(_group(case, same) for same in _groups(case))


def page_text(cases: Iterable[Case] = CASES) -> str:
    """The whole page, as :func:`main` writes it."""
    sections = [_case(c) for c in cases if c.messages]
    return _INTRO + "\n" + "\n".join(sections).rstrip() + "\n"

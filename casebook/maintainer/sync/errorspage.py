"""``book/errors.md``: every message the book asserts, verbatim, generated from the registry.

A reader who pastes an error into the book's search (or a web search) lands here: each
message is page text (not a cell's output), with the releases that print it, the call it
came through, and links to the case's proof and fix. The page is written from the
registry's :class:`~casebook.cases.Message` entries, the same data ``python3 -m casebook
explain`` reads, grouped by the family of the lessons page each case belongs to (its
``[[signature]]``'s family), each group opening with the family's patterns in words, the
ones ``explain`` matches a wording of the reader's own by (``casebook/check/families.toml``);
``tests/test_messages.py`` runs each message's code on its stack and checks that it
prints the text the page shows, and ``tests/test_errors.py`` that the page is in sync.

``python3 -m casebook sync`` writes the page (:func:`page_text`).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable

from casebook.cases import CASES, FAMILIES, SIGNATURES, BugFamily, Case, Message, family_of
from casebook.cases._signatures import FAMILIES_FILE
from casebook.project import ROOT

__all__ = ["PAGE", "page_text"]

PAGE = ROOT / "book" / "errors.md"

_INTRO = """\
# Errors

Paste your traceback, or just its last line, into the box: it names the case of this book
that explains it and links to the fix, as `python3 -m casebook explain` does in a terminal
(the same data, read in your browser; nothing is sent). Below the box: every error message
the book asserts, verbatim, and the bugs that raise nothing, by what you see instead.

<div id="casebook-explain" data-root="../">
<textarea rows="7" spellcheck="false" aria-label="Your traceback or error message"
placeholder="Traceback (most recent call last):&#10;  ...&#10;TypeError: ..."></textarea>
<output aria-live="polite"></output>
</div>

The messages below are as the releases named beside each print them: the wordings of each
case's own bug on the stack of the report and on today's releases, and the messages the same
mistakes give through neighbouring APIs. The book's search box takes a message as your
program printed it (your own names and addresses are left out of the search). Each message
links to the case section that produces and asserts it, and to the case's card, whose first
screen says what to do. In IPython or Jupyter, `%load_ext casebook` adds the same answer
under a matching traceback.

The messages are grouped by the families of {doc}`lessons`. Each group opens with
what the family's messages look like, in words: `explain` matches those patterns (with the
frames of your traceback and the names in your optimizer's state) when your wording is not
below word for word, and answers with the family's case or finding, why it matched and the
`check_optimizer` call to run next.

Each message below is produced by running its code on its stack (`tests/test_messages.py`),
so a wording that changes fails the book's tests before this page can go stale.

## No message: what you see instead

Some bugs raise nothing. If yours prints no error, look for what you see:

"""


def _stack(stack: str) -> str:
    if stack == "current":
        return "today's releases (the lock)"
    if stack.startswith("era:"):
        return f"the reporter's stack (`{stack}`)"
    return f"`{stack}` on today's jax"


def _code(text: str) -> str:
    """``text`` as a Markdown code span, shown verbatim whatever it holds (``__call__``,
    ``<locals>``, a backtick): fenced by one backtick more than its longest run."""
    ticks = 1 + max((len(part) for part in re.findall(r"`+", text)), default=0)
    pad = " " if text.startswith("`") or text.endswith("`") or ticks > 1 else ""
    return f"{'`' * ticks}{pad}{text}{pad}{'`' * ticks}"


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
            f"#### {_code(f'{first.exc_type}: {short}')}{today}",
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
        f"### Case {case.number}: {case.issue.label}",
        "",
        f"{case.summary}. [The case]({_page(case)}) · [upstream]({case.issue.url})",
        "",
        "",
    ]
    return "\n".join(head) + "\n".join(_group(case, same) for same in _groups(case))


def _page_of(family: BugFamily) -> str:
    """The family's page, in words: the lessons page, or the findings page for a family
    the check found."""
    return "the lessons page" if family.docname == "book/lessons" else "the findings page"


def _family(family: BugFamily, cases: list[Case]) -> str:
    """One family's group: its patterns in words, its findings, then its cases."""
    findings = [s for s in SIGNATURES if s.family == family.key and s.owner.startswith("finding-")]
    lines = [f"## Family {family.number}: {family.title.lower()}", ""]
    link = f"[The family on {_page_of(family)}]({family.docname.split('/')[-1]}.ipynb)"
    if not family.patterns:  # a family that raises nothing (a leak)
        found = f"{link}. It raises no error, so no message of it is below; it is found by"
        return "\n".join([*lines, f"{found} {family.found}.", ""])
    lines += [
        f"{link}. Its messages, in words (what `explain` matches a wording of yours by):",
        "",
        *[f"- {p.says}." for p in family.patterns],
        "",
    ]
    if findings:
        lines += [
            "The check's findings of this family (no case of their own, so no message below): "
            + "; ".join(f"[{s.label}](check-findings.ipynb), {s.title}" for s in findings)
            + ".",
            "",
        ]
    return "\n".join(lines) + "\n" + "\n".join(_case(c) for c in cases)


def _quiet(cases: Iterable[Case]) -> str:
    """The "No message" list: each ``[[quiet]]`` symptom of ``families.toml``, linked to
    its case's card or its section of the findings page."""
    by_key = {c.key: c for c in cases}
    lines = []
    for quiet in tomllib.loads(FAMILIES_FILE.read_text())["quiet"]:
        owner = quiet["owner"]
        if owner.startswith("finding-"):
            link = f"[the findings page, §{owner.split('-')[1]}](check-findings.ipynb)"
        else:
            case = by_key[owner]
            link = f"[case {case.number}, {case.issue.label}]({_page(case)})"
        lines.append(f"- {quiet['sees']}: {link}.")
    return "\n".join(lines) + "\n"


def page_text(cases: Iterable[Case] = CASES, families: Iterable[BugFamily] = FAMILIES) -> str:
    """The whole page, as :func:`main` writes it."""
    quiet = _quiet(cases)
    cases, families = [c for c in cases if c.messages], tuple(families)
    sections = [_family(f, [c for c in cases if family_of(c, families) == f]) for f in families]
    other = [c for c in cases if family_of(c, families) is None]
    if other:
        sections.append("## Other messages\n\n" + "\n".join(_case(c) for c in other))
    body = "\n".join(s.rstrip() + "\n" for s in sections).rstrip() + "\n"
    return _INTRO + quiet + "\n" + body

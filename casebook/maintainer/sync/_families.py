"""The families of ``casebook/check/families.toml``, written where a page names them.

* The families table, between ``<!-- families:begin -->`` and ``<!-- families:end -->``
  (``book/lessons``, ``book/intro.md``, ``README.md``): each family's number and name, what
  goes wrong, what finds it, its cases and the check's findings of it.
* A family's section heading on the lessons page: the line after the family's label
  (``(family-drift)=``), ``## Family 1: state that changes type``.

No page counts the families or spells a family's number or name by hand; the workshop
plan's ``{family:KEY}`` placeholders are written by :func:`casebook.cases.family_words`.
``python3 -m casebook sync`` applies :func:`rewrite`; ``tests/test_sync.py`` renames a
family in a copy of the toml and finds the new name on every page.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from casebook.cases import SIGNATURES, BugFamily, Case, family_of

BEGIN, END = "<!-- families:begin -->", "<!-- families:end -->"
_TABLE = re.compile(re.escape(BEGIN) + r"\n.*?" + re.escape(END), re.S)
_HEADING = re.compile(r"^\((family-[\w-]+)\)=\n## .*$", re.M)


def table(families: Iterable[BugFamily], cases: Iterable[Case], *, book: bool) -> str:
    """The families table; ``book``: with the book's roles (a page of ``book/``), else
    with Markdown links from the repository's root (``README.md``)."""
    families, cases = tuple(families), tuple(cases)

    def link(text: str, docname: str, label: str = "") -> str:
        if not book:
            return f"[{text}]({docname}.ipynb)"
        if label:
            return f"{{ref}}`{text} <{label}>`"
        return f"{{doc}}`{text} <{os.path.relpath(docname, 'book')}>`"

    lines = [
        "| family | what goes wrong | found by | cases | the check's findings |",
        "|---|---|---|---|---|",
    ]
    for f in families:
        own = [c for c in cases if family_of(c, families) == f]
        found = [s.owner[8:] for s in SIGNATURES if s.family == f.key and s.owner[:8] == "finding-"]
        findings = f"§{', §'.join(found)} of {link('the findings', 'book/check-findings')}"
        cells = [
            link(f"{f.number}. {f.title}", f.docname, f.anchor),
            f.what,
            f.found,
            ", ".join(f"{link(f'case {c.number}', c.docname)} ({c.issue.label})" for c in own)
            or "none yet",
            findings if found else "none",
        ]
        lines.append(f"| {' | '.join(cells)} |")
    return "\n".join(lines) + "\n"


def rewrite(
    text: str, families: Iterable[BugFamily], cases: Iterable[Case], *, book: bool = True
) -> str:
    """``text`` with its families table and its families' headings written anew."""
    families = tuple(families)
    by_anchor = {f.anchor: f for f in families}

    def heading(m: re.Match[str]) -> str:
        f = by_anchor.get(m.group(1))
        if f is None:
            raise ValueError(f"({m.group(1)})= names no family of families.toml")
        return f"({f.anchor})=\n## Family {f.number}: {f.title.lower()}"

    text = _HEADING.sub(heading, text)
    rendered = f"{BEGIN}\n{table(families, cases, book=book)}{END}"
    return _TABLE.sub(lambda _: rendered, text)

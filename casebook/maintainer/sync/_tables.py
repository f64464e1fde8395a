"""The case tables of README.md, book/intro.md and book/teach.md (its Colab links), written
from the registry.

Each file holds its table between two marker comments, ``<!-- cases:begin -->`` and
``<!-- cases:end -->``. :func:`render` writes the table for a file and :func:`rewritten`
puts it between the markers; ``python3 -m casebook sync`` writes the files, and
``tests/test_sync.py`` fails while one is stale. Standard library only (the Colab links
read ``_config.yml`` through :func:`casebook.maintainer.tools.colab.repository`, imported where they
are rendered).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path

from casebook.cases._base import Case

BEGIN, END = "<!-- cases:begin -->", "<!-- cases:end -->"
#: The files with a case table, relative to the repository root.
FILES = ("README.md", "book/intro.md", "book/teach.md")
#: The address a notebook of the repository opens in Colab from, before its path.
COLAB = "https://colab.research.google.com/github/{repo}/blob/{branch}/"

_BLOCK = re.compile(re.escape(BEGIN) + r"\n(.*?)" + re.escape(END), re.S)


def _literal(text: str) -> Callable[[re.Match[str]], str]:
    """A replacement for ``re.sub`` that inserts ``text`` as it is (no backslash escapes)."""
    return lambda _: text


def _link(case: Case) -> str:
    return f"[{case.issue.label}]({case.issue.url})"


def render(file: str, cases: Iterable[Case], *, repository: tuple[str, str] | None = None) -> str:
    """The markdown table of ``cases`` for ``file`` (one of :data:`FILES`); ``repository``
    is ``(url, branch)``, which the Colab links of book/teach.md open (default: the
    ``repository:`` block of the book's ``_config.yml``)."""
    if file == "README.md":
        lines = ["| # | upstream issue | what breaks | notebook |", "|---|---|---|---|"]
        lines += [f"| {c.number} | {_link(c)} | {c.summary} | `{c.notebook}` |" for c in cases]
    elif file == "book/intro.md":
        lines = ["| # | Upstream issue | What breaks | Libraries | Page |", "|---|---|---|---|---|"]
        lines += [
            f"| {c.number} | {_link(c)} | {c.summary} | {', '.join(c.libraries)} | "
            f"{{doc}}`case {c.number} <../{c.docname}>` |"
            for c in cases
        ]
    elif file == "book/teach.md":
        if repository is None:
            from casebook.maintainer.tools import colab

            repository = colab.repository()
        url, branch = repository
        base = COLAB.format(repo=url.removeprefix("https://github.com/").rstrip("/"), branch=branch)
        # The student edition (committed by sync under handouts/student/), then the page's
        # plain twin (handouts/pages/), which the page's own Colab button opens too.
        rows = [(f"case {c.number}, {_link(c)}", c.notebook, bool(c.workshop)) for c in cases]
        rows += [("lessons", "book/lessons.ipynb", True)]
        lines = ["| page | student edition | full page |", "|---|---|---|"]
        lines += [
            f"| {name} | "
            + (f"[open in Colab]({base}handouts/student/{Path(nb).name})" if handout else "none")
            + f" | [open in Colab]({base}handouts/pages/{Path(nb).name}) |"
            for name, nb, handout in rows
        ]
    else:
        raise ValueError(f"no case table for {file}; known: {FILES}")
    return "\n".join(lines) + "\n"


def current(text: str) -> str | None:
    """The table between the markers of ``text``, or None when it has no markers."""
    m = _BLOCK.search(text)
    return m.group(1) if m else None


def rewritten(
    text: str, file: str, cases: Iterable[Case], *, repository: tuple[str, str] | None = None
) -> str:
    """``text`` (the file ``file``, one of :data:`FILES`) with its table rendered anew."""
    if current(text) is None:
        raise ValueError(f"{file}: no {BEGIN} ... {END} markers around the case table")
    table = render(file, tuple(cases), repository=repository)
    return _BLOCK.sub(_literal(f"{BEGIN}\n{table}{END}"), text, count=1)

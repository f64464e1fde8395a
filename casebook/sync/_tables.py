"""The case tables of README.md, book/intro.md and book/teach.md, written from the registry.

Each file holds its table between two marker comments, ``<!-- cases:begin -->`` and
``<!-- cases:end -->``. :func:`render` writes the table for a file and :func:`rewritten`
puts it between the markers; ``python3 -m casebook sync`` writes the files, and
``tests/test_sync.py`` fails while one is stale. book/teach.md's table is the pages' Colab
links, built from the ``repository:`` block of ``_config.yml``. Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path

from casebook.cases._base import Case
from casebook.tools import colab

__all__ = ["BEGIN", "END", "FILES", "current", "render", "rewritten"]

BEGIN, END = "<!-- cases:begin -->", "<!-- cases:end -->"
#: The files with a case table, relative to the repository root.
FILES = ("README.md", "book/intro.md", "book/teach.md")
#: The pages after the cases that book/teach.md links to Colab too.
_MORE_COLAB = (("lessons", "book/lessons.ipynb"),)

_BLOCK = re.compile(re.escape(BEGIN) + r"\n(.*?)" + re.escape(END), re.S)


def _literal(text: str) -> Callable[[re.Match[str]], str]:
    """A replacement for ``re.sub`` that inserts ``text`` as it is (no backslash escapes)."""
    return lambda _: text


def _link(case: Case) -> str:
    return f"[{case.issue.label}]({case.issue.url})"


def _colab_url(path: str, config: Path) -> str:
    url, branch = colab.repository(config)
    repo = url.removeprefix("https://github.com/").rstrip("/")
    return f"https://colab.research.google.com/github/{repo}/blob/{branch}/{path}"


def _handout(docname: str) -> str:
    """The committed student edition of a page (``sync`` writes it)."""
    return f"handouts/student/{Path(docname).name}.ipynb"


def render(file: str, cases: Iterable[Case], config: Path = colab.CONFIG) -> str:
    """The markdown table of ``cases`` for ``file`` (one of :data:`FILES`); ``config`` is the
    ``_config.yml`` whose repository the Colab links open."""
    if file == "book/teach.md":
        lines = ["| page | student edition | full page |", "|---|---|---|"]
        rows = [(f"case {c.number}, {_link(c)}", c.docname, bool(c.workshop)) for c in cases]
        rows += [(name, path.removesuffix(".ipynb"), True) for name, path in _MORE_COLAB]
        lines += [
            f"| {name} | "
            + (f"[open in Colab]({_colab_url(_handout(doc), config)})" if handout else "none")
            + f" | [open in Colab]({_colab_url(doc + '.ipynb', config)}) |"
            for name, doc, handout in rows
        ]
    elif file == "README.md":
        lines = ["| # | upstream issue | what breaks | notebook |", "|---|---|---|---|"]
        lines += [f"| {c.number} | {_link(c)} | {c.summary} | `{c.notebook}` |" for c in cases]
    elif file == "book/intro.md":
        lines = ["| # | Upstream issue | What breaks | Libraries | Page |", "|---|---|---|---|---|"]
        lines += [
            f"| {c.number} | {_link(c)} | {c.summary} | {', '.join(c.libraries)} | "
            f"{{doc}}`case {c.number} <../{c.docname}>` |"
            for c in cases
        ]
    else:
        raise ValueError(f"no case table for {file}; known: {FILES}")
    return "\n".join(lines) + "\n"


def current(text: str) -> str | None:
    """The table between the markers of ``text``, or None when it has no markers."""
    m = _BLOCK.search(text)
    return m.group(1) if m else None


def rewritten(text: str, file: str, cases: Iterable[Case], config: Path = colab.CONFIG) -> str:
    """``text`` (the file ``file``, one of :data:`FILES`) with its table rendered anew."""
    if current(text) is None:
        raise ValueError(f"{file}: no {BEGIN} ... {END} markers around the case table")
    table = render(file, tuple(cases), config)
    return _BLOCK.sub(_literal(f"{BEGIN}\n{table}{END}"), text, count=1)

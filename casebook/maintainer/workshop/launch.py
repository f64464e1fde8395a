"""The notebooks the book's Colab and Binder launch buttons open: each executed page
whole, in plain Markdown, and each page written as a MyST notebook.

A page's own ``.ipynb`` is MyST: Colab and Jupyter would show its roles and directives
raw, and a MyST notebook's ``.md`` Colab cannot open at all. ``sync`` writes a twin of each
page under ``handouts/pages/``
(:func:`notebooks`): every cell of the page, code cells as they are (tags, the set-up cell,
the hidden checks: the page runs top to bottom as in the book), and each Markdown cell as
sphinx-tojupyter renders it (:mod:`casebook.maintainer.workshop._plain`). The book's launch buttons
point at them (``book/_ext/casebook_launch.py``, through :func:`path_of`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from casebook.maintainer.tools import colab
from casebook.maintainer.workshop import _plain
from casebook.project import ROOT

__all__ = ["FOLDER", "notebook", "notebooks", "pages", "path_of"]

FOLDER = PurePosixPath("handouts/pages")
"""Where the plain twins are committed, relative to the repository."""


def pages(root: Path = ROOT) -> list[Path]:
    """The pages with a plain twin: the executed pages, and the pages written as MyST
    notebooks (``book/how-to-read.md``, whose code cells a reader runs too)."""
    myst = [p for p in sorted(root.glob("book/*.md")) if _plain.is_myst_notebook(p)]
    return [*colab.pages(root), *myst]


def path_of(page: str) -> PurePosixPath:
    """The plain twin of ``page`` (``"notebooks/01-..."`` or ``"book/lessons"``, no
    suffix), relative to the repository."""
    return FOLDER / f"{PurePosixPath(page).name}.ipynb"


def notebook(plain: _plain.PlainPage, metadata: dict) -> dict:
    """A page's cells (``plain``: each with its plain Markdown) as a notebook: a Markdown
    cell that renders to nothing (a solution's end) is left out."""
    cells = []
    for cell, markdown in plain:
        if markdown is None:
            cells.append(dict(cell, source="".join(cell["source"])))
        elif markdown.strip():
            cells.append(
                {
                    "cell_type": "markdown",
                    "id": cell.get("id", f"md-{len(cells)}"),
                    "metadata": {},
                    "source": markdown,
                }
            )
    # not a jupytext pair: the twin is written from the page, never edited
    metadata = {k: v for k, v in metadata.items() if k != "jupytext"}
    return {"cells": cells, "metadata": metadata, "nbformat": 4, "nbformat_minor": 5}


def notebooks(root: Path = ROOT, pages_text: Mapping[Path, str] | None = None) -> dict[Path, str]:
    """``{root/handouts/pages/NAME.ipynb: text}`` for each of :func:`pages`, cut from the page
    as ``pages_text`` holds it (what ``sync`` is about to write), or from its file."""
    texts = pages_text or {}
    plain = _plain.render_book(root, texts)
    out = {}
    for path in pages(root):
        page = path.relative_to(root).with_suffix("").as_posix()
        meta = json.loads(_plain.as_notebook(path, texts.get(path) or path.read_text()))
        meta = meta["metadata"]
        twin = notebook(plain[page], meta)
        out[root / path_of(page)] = json.dumps(twin, indent=1, ensure_ascii=False) + "\n"
    return out

"""MyST markdown twins of the executed pages (jupytext ``ipynb,md:myst``, as the JAX docs do).

Every page in ``notebooks/`` and ``book/*.ipynb`` has a ``.md`` twin next to it: the same
cells as MyST markdown, so diffs, linters and duplicate-code finders can read the code,
and a reviewer can read a change to a notebook as text. The ``.ipynb`` stays the source that
nbmake, Colab and the book build run; the build excludes the ``.md`` twins (``_config.yml``),
so it reads one of the two. ``python3 -m casebook sync`` rewrites the twins after a notebook
changes (:func:`myst`), and ``tests/test_sync.py`` fails while one is out of date.
"""

from __future__ import annotations

import json
from pathlib import Path

import jupytext

FORMATS = "ipynb,md:myst"


def twin(page: Path) -> Path:
    """The ``.md`` twin of a notebook."""
    return page.with_suffix(".md")


def myst(notebook_text: str) -> str:
    """The MyST markdown twin of a notebook given as its ``.ipynb`` text."""
    return jupytext.writes(jupytext.reads(notebook_text, fmt="ipynb"), fmt="md:myst")


def notebook(myst_text: str) -> str:
    """The notebook (``.ipynb`` text) of a page written in MyST markdown, its cells numbered
    (``cell-0``, ...) so that what is made from it is the same on every run."""
    nb = jupytext.reads(myst_text, fmt="md:myst")
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i}"
    return json.dumps(nb, indent=1, ensure_ascii=False)


def paired(nb: dict) -> dict:
    """The notebook with jupytext's pairing in its metadata (``ipynb,md:myst``)."""
    nb.setdefault("metadata", {}).setdefault("jupytext", {})["formats"] = FORMATS
    return nb

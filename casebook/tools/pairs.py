"""MyST markdown twins of the executed pages (jupytext ``ipynb,md:myst``, as the JAX docs do).

Every page in ``notebooks/`` and ``book/*.ipynb`` has a ``.md`` twin next to it: the same
cells as MyST markdown, so diffs, linters and duplicate-code finders can read the code,
and a reviewer can read a change to a notebook as text. The ``.ipynb`` stays the source that
nbmake, Colab and the book build run; the build excludes the ``.md`` twins (``_config.yml``),
so it reads one of the two. ``python3 -m casebook sync`` rewrites the twins after a notebook
changes, and ``tests/test_pairs.py`` fails while one is out of date.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jupytext

from casebook.tools import colab

FORMATS = "ipynb,md:myst"


def twin(page: Path) -> Path:
    """The ``.md`` twin of a notebook."""
    return page.with_suffix(".md")


def expected_text(page: Path) -> str:
    """The MyST markdown the notebook's twin must hold."""
    return jupytext.writes(jupytext.read(page), fmt="md:myst")


def in_sync(page: Path) -> bool:
    return twin(page).exists() and twin(page).read_text() == expected_text(page)


def _mark_paired(page: Path) -> bool:
    nb = json.loads(page.read_text())
    meta = nb.setdefault("metadata", {}).setdefault("jupytext", {})
    if meta.get("formats") == FORMATS:
        return False
    meta["formats"] = FORMATS
    page.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    return True


def sync(root: Path = colab.ROOT) -> list[Path]:
    """Pair every page and rewrite each twin that differs; return the files written.

    A twin edited after its notebook is left alone (with a message), so an edit made in
    the ``.md`` is never lost: bring it into the notebook first, with
    ``jupytext --to ipynb --update -o PAGE.ipynb PAGE.md``.
    """
    written = []
    for page in colab.pages(root):
        if _mark_paired(page):
            written.append(page)
        if in_sync(page):
            continue
        if twin(page).exists() and twin(page).stat().st_mtime > page.stat().st_mtime:
            print(
                f"casebook: {twin(page).name} is newer than {page.name}; not rewritten. Run "
                f"jupytext --to ipynb --update -o {page.name} {twin(page).name} first"
            )
            continue
        twin(page).write_text(expected_text(page))
        written.append(twin(page))
    return written


def main(argv: list[str]) -> int:
    """``python -m casebook.tools.pairs``: set-up cells from ``_config.yml``, then the twins."""
    changed = colab.sync() + sync()
    print(f"casebook: {len(changed)} file(s) rewritten" if changed else "casebook: all in sync")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

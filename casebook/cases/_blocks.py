"""Program code shown in the page's text, before the cell that runs it.

A cell such as ``releases.program_table("optax_828.doors", RELEASES)`` runs a program of a
case's folder on old releases. Its code must be readable where the page is read without
running it (GitHub, Colab before the first run), so the markdown just before the cell
holds it, in a block that names what it shows::

    <!-- program: ["optax_828.doors", "disable_jit"] -->
    ```python
    ...the source, as releases.show("optax_828.doors", "disable_jit") gives it...
    ```

The JSON list holds :func:`casebook.releases.show`'s arguments. :func:`sync` rewrites every
block from the program files (``python3 -m casebook sync`` runs it, then the MyST twins),
and ``tests/test_blocks.py`` fails while one is stale, so the text is never a stale copy.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from casebook.project import ROOT
from casebook.releases import show
from casebook.tools import pairs

__all__ = ["BLOCK", "blocks_in", "expected", "main", "sync"]

BLOCK = re.compile(r"(<!-- program: (\[.*?\]) -->\n```python\n)(.*?)(```)", re.S)
"""A program block: the marker with its JSON arguments, then a python code block."""


def expected(arguments: str) -> str:
    """What a block with these JSON arguments must hold: the program's source pieces."""
    args = json.loads(arguments)
    return str(show(args[0], *args[1:])).rstrip("\n") + "\n"


def blocks_in(text: str) -> list[tuple[str, str]]:
    """``(arguments, body)`` of each program block in a markdown text."""
    return [(m.group(2), m.group(3)) for m in BLOCK.finditer(text)]


def _rewrite(text: str) -> str:
    return BLOCK.sub(lambda m: m.group(1) + expected(m.group(2)) + m.group(4), text)


def sync(root: Path = ROOT) -> list[Path]:
    """Rewrite the program blocks of every page's markdown cells; return the notebooks
    written (their MyST twins follow with :func:`casebook.tools.pairs.sync`)."""
    written = []
    for page in sorted((root / "notebooks").glob("*.ipynb")) + sorted(
        (root / "book").glob("*.ipynb")
    ):
        nb = json.loads(page.read_text())
        changed = False
        for cell in nb["cells"]:
            if cell["cell_type"] != "markdown":
                continue
            source = "".join(cell["source"])
            new = _rewrite(source)
            if new != source:
                cell["source"] = new.splitlines(keepends=True)
                changed = True
        if changed:
            page.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
            written.append(page)
    return written


def main(argv: list[str]) -> int:
    """``python3 -m casebook sync``: program blocks, then set-up cells and MyST twins."""
    written = sync()
    for page in written:
        print(f"casebook: program blocks rewritten in {page.relative_to(ROOT)}")
    return pairs.main(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

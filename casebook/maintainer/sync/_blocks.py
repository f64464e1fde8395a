"""Program code shown in the page's text, before the cell that runs it.

A cell such as ``releases.program_table("optax_828.doors", RELEASES)`` runs a program of a
case's folder on old releases. Its code must be readable where the page is read without
running it (GitHub, Colab before the first run), so the markdown just before the cell
holds it, in a block that names what it shows::

    <!-- program: ["optax_828.doors", "disable_jit"] -->
    ```python
    ...the source, as releases.show("optax_828.doors", "disable_jit") gives it...
    ```

The JSON list holds :func:`casebook.releases.show`'s arguments. :func:`rewrite` writes every
block from the program files (``python3 -m casebook sync`` applies it to every page), and
``tests/test_sync.py`` fails while one is stale, so the text is never a stale copy.
"""

from __future__ import annotations

import json
import re

from casebook.releases import show

BLOCK = re.compile(r"(<!-- program: (\[.*?\]) -->\n```python\n)(.*?)(```)", re.S)
"""A program block: the marker with its JSON arguments, then a python code block."""


def expected(arguments: str) -> str:
    """What a block with these JSON arguments must hold: the program's source pieces."""
    args = json.loads(arguments)
    return str(show(args[0], *args[1:])).rstrip("\n") + "\n"


def blocks_in(text: str) -> list[tuple[str, str]]:
    """``(arguments, body)`` of each program block in a markdown text."""
    return [(m.group(2), m.group(3)) for m in BLOCK.finditer(text)]


def rewrite(text: str) -> str:
    """``text`` (a markdown cell) with each program block holding its program's source."""
    return BLOCK.sub(lambda m: m.group(1) + expected(m.group(2)) + m.group(4), text)

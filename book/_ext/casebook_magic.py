"""The book's own Sphinx extension: a ``%%on_release`` cell reads as plain code on the web.

In the notebook (Colab, Jupyter, the tests) a cell that runs on a historical release starts
with the magic's line, ``%%on_release optax==0.1.9 --raises TypeError --match "..."``. A
reader who copies that line into plain Jupyter gets a ``UsageError``. On the web the line is
left out, and a small label above the code says what it stands for: "ran on optax 0.1.9 ·
raises TypeError". A ``%load_ext casebook...`` line, which only loads that magic, is left
out likewise. The notebook itself is unchanged.
"""

from __future__ import annotations

import shlex
from typing import Any

from docutils import nodes

MAGIC = "%%on_release"


def label(line: str) -> str:
    """The label for a magic's line: where the cell ran, and what it asserts."""
    args = shlex.split(line)[1:]
    target = args[0] if args and not args[0].startswith("-") else "current"
    if target == "current":
        where = "ran on today's releases, in a fresh process"
    elif target.startswith("era:"):
        where = f"ran in the reporter's stack ({target})"
    elif "==" in target:
        where = "ran on " + target.replace("==", " ")
    else:
        where = f"ran on {target} (a patched release)"
    parts = [where]
    if "--raises" in args:
        parts.append("raises " + args[args.index("--raises") + 1])
    elif "--ok" in args:
        parts.append("runs cleanly")
    if "--x64" in args:
        parts.append("64-bit")
    return " · ".join(parts)


def visible(code: str) -> tuple[str | None, str]:
    """``(label, code)``: the label of a magic cell (None for other code) and the code a
    reader sees, without the magic's line or ``%load_ext casebook`` lines."""
    lines = code.split("\n")
    tag = None
    if lines and lines[0].startswith(MAGIC):
        tag, lines = label(lines[0]), lines[1:]
    lines = [x for x in lines if not x.startswith("%load_ext casebook")]
    while lines and not lines[-1].strip():
        lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
    return tag, "\n".join(lines)


def _in_code_cell(block: nodes.Node) -> bool:
    """Whether a literal block is a notebook cell's source (MyST-NB's ``cell_input``), not
    an example in the prose (the how-to page shows the magic on purpose)."""
    parent = block.parent
    return parent is not None and "cell_input" in parent.get("classes", [])


def _rewrite(app: Any, doctree: nodes.document, docname: str) -> None:
    for block in list(doctree.findall(nodes.literal_block)):
        if not _in_code_cell(block):
            continue
        code = block.astext()
        if not (code.startswith(MAGIC) or "%load_ext casebook" in code):
            continue
        tag, shown = visible(code)
        block.children = [nodes.Text(shown)]
        block.rawsource = shown
        if tag is not None:
            note = nodes.paragraph("", "", nodes.inline(tag, tag, classes=["casebook-ran-on"]))
            block.parent.insert(block.parent.index(block), note)


def setup(app: Any) -> dict[str, Any]:
    app.connect("doctree-resolved", _rewrite)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

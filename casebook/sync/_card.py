"""A case page's reader-facing text that its ``case.toml`` is the one source of.

Two parts of a case notebook are written from the case's data, never by hand:

* **the card**, the page's first Markdown cell: the title, the "If you got here from this
  error" box with today's message as a text block, the older wordings and pointers
  (``[card]``: ``title``, ``lead``, ``today``, ``more``), and the case's ``why`` and
  ``still_open``;
* **the repro cell** (tagged ``card-wrong``: the card's "You probably wrote"), whose code
  after its ``%%on_release`` line is ``scripts/wrong.py``, and **the fix cell** (tagged
  ``card-fix``: the card's "Do this"), which is ``scripts/fix.py``;
* **each exercise's "What a correct answer prints"**, from ``[answers]``.

The page's hidden checks compare what runs with the same data (``CASE.card["today"]``,
``CASE.answer(label)``), so the text a reader sees and the text a check holds it to are one.
"""

from __future__ import annotations

import re

from casebook.cases import Case

__all__ = [
    "ANSWER",
    "FIX_TAG",
    "WRONG_TAG",
    "answers_in",
    "card_markdown",
    "rewrite_answers",
    "rewrite_card",
]

WRONG_TAG, FIX_TAG = "card-wrong", "card-fix"

ANSWER = re.compile(
    r"(:label: (case\d+-ex\d+)\n.*?:::\{dropdown\} What a correct answer prints\n```text\n)"
    r"(.*?)(```\n:::)",
    re.S,
)
"""An exercise's label, then its dropdown's text block (group 3: what the reader sees)."""


def card_markdown(case: Case) -> str:
    """The card cell's Markdown, from ``case.toml``'s ``[card]``."""
    card = case.card
    return (
        f"# {card['title']}\n\n"
        ":::{admonition} If you got here from this error\n:class: tip\n\n"
        f"{card['lead']}\n\n```text\n{card['today']}\n```\n\n{card['more']}\n\n"
        f"**Why:** {case.why}\n\n**Still open:** {case.still_open}\n:::"
    )


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def rewrite_card(cells: list[dict], case: Case) -> list[dict]:
    """``cells`` with the first Markdown cell replaced by the case's card, the repro cell's
    code by ``scripts/wrong.py`` (its magic line kept) and the fix cell by ``scripts/fix.py``;
    a page without one of the two tagged cells raises, naming the tag."""
    at = next(i for i, c in enumerate(cells) if c["cell_type"] == "markdown")
    cells = list(cells)
    cells[at] = dict(cells[at], source=_lines(card_markdown(case)))
    found = set()
    for i, cell in enumerate(cells):
        tags = cell.get("metadata", {}).get("tags", [])
        if WRONG_TAG in tags and case.wrong:
            magic = "".join(cell["source"]).split("\n", 1)[0]
            cells[i] = dict(cell, source=_lines(magic + "\n" + case.wrong))
            found.add(WRONG_TAG)
        elif FIX_TAG in tags and case.fix:
            cells[i] = dict(cell, source=_lines(case.fix))
            found.add(FIX_TAG)
    missing = {WRONG_TAG, FIX_TAG} - found
    if missing:
        raise ValueError(f"{case.docname}: no code cell tagged {sorted(missing)} (the card's)")
    return cells


def answers_in(text: str) -> list[tuple[str, str]]:
    """``(label, printed)`` of each exercise answer block of a Markdown text."""
    return [(m.group(2), m.group(3)) for m in ANSWER.finditer(text)]


def rewrite_answers(cells: list[dict], case: Case) -> list[dict]:
    """``cells`` with each exercise's "What a correct answer prints" from ``[answers]``;
    an exercise whose answer the data lacks raises, naming the label."""
    out = []
    for cell in cells:
        if cell["cell_type"] == "markdown":
            text = "".join(cell["source"])
            new = ANSWER.sub(lambda m: m.group(1) + case.answer(m.group(2)) + m.group(4), text)
            if new != text:
                cell = dict(cell, source=new.splitlines(keepends=True))
        out.append(cell)
    return out

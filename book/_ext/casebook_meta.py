"""The book's own Sphinx extension: each case page's meta description carries its error.

A reader searches the web for the message they got. The page's ``<title>`` is the case's
short title, and its meta description (which search engines show, and Open Graph previews
reuse) is written here from the registry: the issue, today's message as the card shows it,
and what the page gives. The Errors page gets its own. A link preview (``og:description``)
shows the card's first sentence, its title, lead and message, not the page's first
paragraph, which sphinxext-opengraph would take (an imports cell, a stack line).
"""

from __future__ import annotations

import re
from typing import Any

from casebook import cases


def _description(case: cases.Case) -> str:
    shown = case.today or case.messages
    first = f" {shown[0].exc_type}: {shown[0].text.splitlines()[0]}" if shown else ""
    if case.card.get("today"):  # the message the card shows, as it shows it
        first = " " + case.card["today"].splitlines()[0]
    summary = case.summary.replace("`", "")
    text = f"{case.issue.label}: {summary}.{first} The fix that runs today, why, and the proof."
    return text if len(text) <= 300 else text[:297] + "..."


def _card_sentence(case: cases.Case) -> str:
    """The card's first sentence: its title, its lead and the message it shows."""
    card = case.card
    shown = (card.get("today") or "").splitlines()[:1]
    text = " ".join([f"{card['title']}.", card.get("lead", ""), *shown]).replace("`", "")
    text = cases.with_eras(text)  # an era's version, as the page renders it
    return text if len(text) <= 200 else text[:197] + "..."


PREVIEWS = {case.docname: _card_sentence(case) for case in cases.CASES}
_OG = re.compile(r'<meta property="og:description" content="[^"]*" ?/?>')

DESCRIPTIONS = {case.docname: _description(case) for case in cases.CASES}
DESCRIPTIONS["book/errors"] = (
    "Every error message of the JAX Bug Casebook, verbatim, with the jax, optax, equinox and "
    "diffrax releases that print it, and the fix for each."
)


def _escaped(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def _add_description(
    app: Any, pagename: str, templatename: str, context: dict, doctree: Any
) -> None:
    description = DESCRIPTIONS.get(pagename)
    if description:
        context["metatags"] = context.get("metatags", "") + (
            f'\n<meta name="description" content="{_escaped(description)}" />'
        )
    preview = PREVIEWS.get(pagename)
    if preview:  # after sphinxext-opengraph's own tags (a later priority)
        tag = f'<meta property="og:description" content="{_escaped(preview)}" />'
        context["metatags"] = _OG.sub(lambda _: tag, context.get("metatags", ""), count=1)


def setup(app: Any) -> dict[str, Any]:
    app.connect("html-page-context", _add_description, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

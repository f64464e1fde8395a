"""``explain``'s data for the browser: what the Errors page's paste box ranks with.

The page's script (``book/_static/explain.js``) reads a pasted traceback as
:mod:`casebook.explain._parse` does and ranks it as :mod:`casebook.explain._rank` does, from
this data: the families' patterns and the signatures (``families.toml``, with their
placeholders expanded and written in JavaScript's regular-expression syntax), and every
case's messages in :func:`~casebook.cases.normalize`'s form, with what ``_rank`` would
compute of each wording alone (whether a family's pattern takes nothing specific from it).
The book's build writes it into the site (``book/_ext/casebook_explain.py``), so the page and
the terminal rank with the same data; ``tests/test_browser.py`` feeds the variant corpus to
both and finds the same answers.

Standard library only.
"""

from __future__ import annotations

import json
from typing import Any

from casebook.cases import CASES, FAMILIES, SIGNATURES, Case, normalize
from casebook.explain._answer import url
from casebook.explain._parse import LIMIT
from casebook.explain._patterns import compile_pattern
from casebook.explain._rank import (
    EXACT,
    FAMILY,
    FRAME,
    HINT,
    MARK,
    PRIMARY,
    SAME_WORDING,
    SITE,
    _generic as generic,
)
from casebook.project import BOOK_URL


def javascript(regex: str) -> str:
    """A pattern of ``families.toml``, expanded, in JavaScript's syntax (named groups
    ``(?<name>…)``; the expansions use nothing else Python writes differently).

    >>> print(javascript("of {name}"))
    of (?<name>(?<!\\w)[A-Za-z_]\\w{0,80})
    """
    return compile_pattern(regex).pattern.replace("(?P<", "(?<")


def _title(case: Case) -> str:
    return f"{case.issue.label} (case {case.number}): {case.summary.replace('`', '')}"


def data() -> dict[str, Any]:
    """Everything the page's ranking reads (see the module)."""
    patterns = [p.regex for f in FAMILIES for p in f.patterns]
    owners = {c.key: {"title": _title(c), "url": url(c.docname)} for c in CASES}
    for s in SIGNATURES:
        owners.setdefault(s.owner, {"title": f"{s.label}: {s.title.replace('`', '')}"})
        owners[s.owner].setdefault("url", url(s.docname, s.anchor))
    for f in FAMILIES:
        owners[f"family-{f.key}"] = {
            "title": f"Family {f.number}: {f.title.lower()}",
            "url": url(f.docname, f.anchor),
        }
    return {
        "limit": LIMIT,
        "bookUrl": BOOK_URL,
        "scores": {
            "exact": EXACT,
            "sameWording": SAME_WORDING,
            "frame": FRAME,
            "hint": HINT,
            "mark": MARK,
            "primary": PRIMARY,
            "site": SITE,
            "family": FAMILY,
        },
        "families": [
            {
                "key": f.key,
                "number": f.number,
                "title": f.title,
                "library": f.library,
                "url": url(f.docname, f.anchor),
                "dataFrame": f.data_frame,
                "sites": list(f.sites),
                "patterns": [
                    {"regex": javascript(p.regex), "reason": p.reason, "frames": list(p.frames)}
                    for p in f.patterns
                ],
            }
            for f in FAMILIES
        ],
        "signatures": [
            {
                "owner": s.owner,
                "family": s.family,
                "label": s.label,
                "url": url(s.docname, s.anchor),
                "frames": list(s.frames),
                "notFrames": list(s.not_frames),
                "hints": list(s.hints),
                "marks": [{"regex": javascript(m.regex), "reason": m.reason} for m in s.marks],
                "says": s.says,
                "primary": s.primary,
            }
            for s in SIGNATURES
        ],
        "messages": [
            {
                "case": c.key,
                "label": c.issue.label,
                "number": c.number,
                "url": url(c.docname),
                "api": m.api,
                "versions": m.versions,
                "text": normalize(m.text),
                "length": len(m.text),
                "familyWording": any(generic(p, " ".join(m.text.split())) for p in patterns),
            }
            for c in CASES
            for m in c.messages
            if m.distinctive
        ],
        "owners": owners,
    }


def script() -> str:
    """The data as a script that the page loads before ``explain.js``."""
    return f"const CASEBOOK_EXPLAIN = {json.dumps(data(), indent=None, sort_keys=True)};\n"

"""A family's message pattern, compiled: placeholders expanded to bounded expressions.

``families.toml`` writes its patterns with placeholders (``{path}``, ``{dtype}``,
``{type}``, ``{name}``, ``{any}``) so that a pattern reads like the message it matches;
here each becomes a named group (``path``, ``dtype2``) whose quantifiers are all bounded,
and no group repeats a group, so a search is linear in the text: a 10 MB text of near
matches takes well under a second (``tests/test_explain_bad_input.py``).
"""

from __future__ import annotations

import functools
import re

#: What each placeholder matches: bounded character classes, never a nested repeat.
PLACEHOLDERS = {
    "path": r"[\w.\[\]'\"()]{1,160}",
    "dtype": r"[a-z]{1,10}\d{0,3}(?:<\w{1,10}>)?\[[\d, ]{0,60}\]",
    "type": r"[\w.]{1,160}",
    "name": r"(?<!\w)[A-Za-z_]\w{0,80}",
    "any": r".{0,300}?",
}
_PLACEHOLDER = re.compile(r"\{(" + "|".join(PLACEHOLDERS) + r")(\d?)\}")


@functools.cache
def compile_pattern(regex: str) -> re.Pattern[str]:
    """``regex`` with its placeholders expanded (``{dtype2}`` is the group ``dtype2``;
    ``{any}`` is not a group)."""

    def expand(m: re.Match[str]) -> str:
        name, number = m.groups()
        body = PLACEHOLDERS[name]
        return f"(?:{body})" if name == "any" else f"(?P<{name}{number}>{body})"

    return re.compile(_PLACEHOLDER.sub(expand, regex))


def search(regex: str, text: str) -> dict[str, str] | None:
    """The placeholders' values where ``regex`` first matches ``text`` (a message with its
    blanks made one space), or None where it does not."""
    m = compile_pattern(regex).search(text)
    if m is None:
        return None
    return {k: v for k, v in m.groupdict().items() if v is not None}

"""What the other modules of :mod:`casebook.trace` share: list results that print one
line per item (:class:`_Listing`), :func:`shorten` and the display form of a key path.

Kept apart so that the types, drift, structure, jaxpr and cond modules can each use
them without importing one another.
"""

from __future__ import annotations

from typing import TypeVar

from casebook.display import PlainText

_T = TypeVar("_T")


class _Listing(PlainText, list[_T]):
    """A list result that prints one line per item (``empty_text`` when empty),
    also as the plain-text display in IPython/Jupyter."""

    empty_text = "(none)"

    def __str__(self) -> str:
        return "\n".join(map(str, self)) if self else self.empty_text


def shorten(text: str, width: int = 72) -> str:
    """Cut ``text`` to ``width`` characters, marking the cut with '...'.

    Examples:
        >>> shorten("PyTreeDef({'a': *, 'b': *})", 16)
        "PyTreeDef({'a..."
    """
    return text if len(text) <= width else text[: width - 3] + "..."


def _path_text(path: str) -> str:
    """Display form of a key path: the root (empty path) is shown as '<root>'."""
    return path or "<root>"

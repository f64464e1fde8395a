"""Every table of the book, rendered as text and as HTML from one description.

Version tables, timings, "measured on" tables, the runs of the pages, check reports and
drift reports are all small tables. Each describes its content once, as a :class:`Table`
of plain strings or :class:`Cell` objects (a cell that needs colour, a tooltip, code
type or a link), and this module renders it: as an aligned markdown table for ``str``
and IPython's plain display, and as an HTML table in Jupyter and on the built pages.
Nothing else in the package writes ``<table>`` by hand, so the pages look alike and an
escaping rule lives in one place.

Objects that display as a table subclass :class:`TableDisplay` and implement ``table()``;
objects that only print as text subclass :class:`PlainText`, which gives IPython's plain
display the ``str`` of the object.

Standard library only: importing this module imports neither jax nor IPython.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Cell",
    "PlainText",
    "Table",
    "TableDisplay",
    "format_number",
    "glue",
    "pick_unit",
    "seconds_text",
    "unit_scale",
]

_UNITS = {"s": 1.0, "ms": 1e3, "us": 1e6, "µs": 1e6, "ns": 1e9}


# --------------------------------------------------------------------------- numbers


def format_number(value: float) -> str:
    """Three significant figures, without switching to exponent notation.

    >>> format_number(0.012345), format_number(12345.6)
    ('0.0123', '12346')
    """
    return f"{value:.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def pick_unit(seconds: float) -> tuple[str, float]:
    """The unit, and its scale from seconds, that shows ``seconds`` as 1 to 1000.

    >>> pick_unit(0.02)
    ('ms', 1000.0)
    """
    for unit in ("s", "ms", "µs"):
        if seconds >= 1 / _UNITS[unit]:
            return unit, _UNITS[unit]
    return "ns", _UNITS["ns"]


def unit_scale(unit: str) -> float:
    """Scale from seconds to ``unit`` ('s', 'ms', 'us', 'µs' or 'ns')."""
    return _UNITS[unit]


def seconds_text(seconds: float) -> str:
    """``seconds`` in the unit that shows it as 1 to 1000, e.g. ``'12.3 ms'``."""
    unit, scale = pick_unit(seconds)
    return f"{format_number(seconds * scale)} {unit}"


# ---------------------------------------------------------------------------- mixins


class PlainText:
    """Mixin: IPython's plain-text display of the object is its ``str``.

    Without it IPython would show the ``repr`` (a dataclass's fields, or a list's items)
    where the book wants the readable text.
    """

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))


# ----------------------------------------------------------------------------- cells


@dataclass(frozen=True)
class Cell:
    """One table cell with more than text: its text, and how HTML should show it.

    Args:
        text: what the text table shows (and, escaped, what HTML shows unless ``html``
            is given).
        code: set the content in ``<code>``.
        style: CSS for the ``<td>``.
        title: a tooltip, on the ``<td>``.
        html: ready-made, already-escaped content (a link, say) that replaces the
            escaped text in HTML only.

    Examples:
        >>> cell = Cell("OK", style="color:green", title="ran cleanly")
        >>> cell.to_html()
        '<td style="color:green" title="ran cleanly">OK</td>'
    """

    text: str
    code: bool = False
    style: str = ""
    title: str = ""
    html: str | None = None

    def to_html(self, tag: str = "td") -> str:
        content = self.html if self.html is not None else html.escape(self.text)
        if self.code:
            content = f"<code>{content}</code>"
        attrs = (f' style="{html.escape(self.style, quote=True)}"' if self.style else "") + (
            f' title="{html.escape(self.title, quote=True)}"' if self.title else ""
        )
        return f"<{tag}{attrs}>{content}</{tag}>"


CellLike = str | Cell


def _text(cell: CellLike) -> str:
    return cell.text if isinstance(cell, Cell) else cell


def _html(cell: CellLike, tag: str) -> str:
    return cell.to_html(tag) if isinstance(cell, Cell) else f"<{tag}>{html.escape(cell)}</{tag}>"


# ----------------------------------------------------------------------------- table


@dataclass(frozen=True, repr=False)
class Table(PlainText):
    """A small table: aligned markdown text as ``str``, an HTML table in Jupyter.

    Args:
        header: the column names, each a ``str`` or a :class:`Cell`.
        rows: the rows, each a tuple of ``str`` or :class:`Cell`, as long as ``header``.
        caption: printed under the text table, and the HTML ``<caption>``.

    Examples:
        >>> table = Table(("release", "trigger"), (("optax==0.1.9", "TypeError"),
        ...                                        ("current", "OK")), caption="measured")
        >>> print(table)
        | release      | trigger   |
        |--------------|-----------|
        | optax==0.1.9 | TypeError |
        | current      | OK        |
        <BLANKLINE>
        measured

        In Jupyter it shows as HTML, escaped:

        >>> Table(("code",), (("a < b",),))._repr_html_()
        '<table><thead><tr><th>code</th></tr></thead><tbody><tr><td>a &lt; b</td></tr></tbody></table>'
    """

    header: tuple[CellLike, ...]
    rows: tuple[tuple[CellLike, ...], ...]
    caption: str = ""

    def __str__(self) -> str:
        header = tuple(_text(c) for c in self.header)
        rows = [tuple(_text(c) for c in row) for row in self.rows]
        widths = [max(len(cell) for cell in column) for column in zip(header, *rows)]

        def line(cells: Sequence[str]) -> str:
            return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"

        lines = [line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
        lines += [line(row) for row in rows]
        if self.caption:
            lines += ["", self.caption]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        caption = f"<caption>{html.escape(self.caption)}</caption>" if self.caption else ""
        head = "".join(_html(c, "th") for c in self.header)
        body = "".join("<tr>" + "".join(_html(c, "td") for c in row) + "</tr>" for row in self.rows)
        return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


class TableDisplay(PlainText):
    """Mixin for objects that render through ``self.table()`` (a :class:`Table`): the
    same table as text (``str``), in IPython's plain display, and as HTML in Jupyter."""

    def table(self) -> Table:
        raise NotImplementedError

    def __str__(self) -> str:
        return str(self.table())

    def _repr_html_(self) -> str:
        return self.table()._repr_html_()


# --------------------------------------------------------------------------- prose


def glue(name: str, value: Any, *, display: bool = False) -> Any:
    """Give ``value`` a name that the page's prose quotes, and return it.

    In the built book, myst-nb's ``glue`` stores it and the Markdown writes
    ``{glue:text}`name:.2f``` where the number belongs, so no sentence is assembled in
    code. Where myst-nb is not installed (Colab, a bare kernel) nothing is stored, and
    the value is only displayed if ``display`` is true.

    Args:
        name: the key the prose quotes; unique across the book, so prefixed with the
            page (``"case1-ratio-ab"``).
        value: the number (or any object) to store.
        display: also show ``value`` in the cell's output.

    Returns:
        ``value``, a NumPy or jax scalar as the Python number it holds (myst-nb formats
        a glued number from its ``repr``), so a cell can glue and use it in one line.

    Examples:
        In a code cell (outside a kernel nothing is shown):

        >>> ratio = glue("case0-ratio", 1.2345)
        >>> ratio
        1.2345

        and in the page's Markdown: ``{glue:text}`case0-ratio:.2f``` reads 1.23.

        >>> import numpy as np
        >>> glue("case0-share", np.float64(5.5))
        5.5
    """
    if getattr(value, "ndim", None) == 0 and hasattr(value, "item"):
        value = value.item()  # a NumPy or jax scalar: its repr would not format as a number
    try:
        from myst_nb import glue as store
    except ImportError:
        if display:
            from IPython.display import display as show

            show(value)
        return value
    store(name, value, display=display)
    return value

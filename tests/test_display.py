"""Unit tests of casebook.display: one table description, rendered as text and HTML."""

from __future__ import annotations

from dataclasses import dataclass

from casebook import display
from casebook.display import Cell, PlainText, Table, TableDisplay

READS_PAGES = False


class _Printer:
    def __init__(self) -> None:
        self.out = ""

    def text(self, s: str) -> None:
        self.out += s


def test_text_table_is_aligned_markdown_with_caption():
    t = Table(("name", "n"), (("a", "1"), (Cell("longer", code=True), "22")), caption="cap")
    assert str(t).splitlines() == [
        "| name   | n  |",
        "|--------|----|",
        "| a      | 1  |",
        "| longer | 22 |",
        "",
        "cap",
    ]


def test_html_table_escapes_and_applies_cell_attributes():
    t = Table(
        ("<h>", "x"),
        (
            (
                Cell("v<1", code=True, style="color:red", title='say "hi"'),
                Cell("link", html='<a href="p.html">link</a>'),
            ),
        ),
        caption="a & b",
    )
    got = t._repr_html_()
    assert got.startswith(
        "<table><caption>a &amp; b</caption><thead><tr><th>&lt;h&gt;</th><th>x</th>"
    )
    assert '<td style="color:red" title="say &quot;hi&quot;"><code>v&lt;1</code></td>' in got
    assert '<td><a href="p.html">link</a></td>' in got
    assert got.endswith("</tr></tbody></table>")
    assert "<caption>" not in Table(("a",), ())._repr_html_()


def test_mixins_give_text_pretty_and_html():
    @dataclass
    class Two(TableDisplay):
        n: int

        def table(self) -> Table:
            return Table(("n",), ((str(self.n),),))

    two = Two(2)
    printer = _Printer()
    two._repr_pretty_(printer, False)
    assert printer.out == str(two) == str(two.table())
    assert two._repr_html_() == two.table()._repr_html_()

    class Word(PlainText):
        def __str__(self) -> str:
            return "word"

    printer = _Printer()
    Word()._repr_pretty_(printer, False)
    assert printer.out == "word"


def test_numbers_and_units():
    assert display.format_number(0.012345) == "0.0123"
    assert display.format_number(12345.6) == "12346"
    assert display.pick_unit(2.0) == ("s", 1.0)
    assert display.pick_unit(0.02) == ("ms", 1e3)
    assert display.pick_unit(2e-6) == ("µs", 1e6)
    assert display.pick_unit(2e-9) == ("ns", 1e9)
    assert display.seconds_text(0.0123) == "12.3 ms"
    assert display.unit_scale("us") == 1e6


def test_dataclasses_that_print_as_text_show_their_text_in_ipython() -> None:
    """A dataclass's generated ``__repr__`` would win over ``PlainText._repr_pretty_`` in
    IPython; every displayed dataclass of the package turns it off."""
    import dataclasses

    from IPython.lib.pretty import pretty

    from casebook import failure
    from casebook.bench import claims, records
    from casebook.releases import _runner as runner
    from casebook.status import runs, stack

    for cls in (
        failure.Failure,
        claims.Claim,
        runner.Outcome,
        records.MeasuredOn,
        runs.RunsTable,
        stack.Stack,
    ):
        assert dataclasses.is_dataclass(cls) and "__repr__" not in vars(cls), cls
    caught = failure.capture(int, "x")
    assert pretty(caught) == str(caught) == caught.first_line


def test_a_table_of_runs_shows_the_values_the_runs_returned():
    """A count the prose quotes is in the table (issue 51): a run that returned a value
    shows it, never a bare OK; a run that returned nothing shows OK, a failure its type."""
    from casebook.releases import Outcome, VersionTable

    def ran(result, exc_type=None):
        return Outcome(
            "current", None, exc_type is None, exc_type, [exc_type] if exc_type else [],
            "boom" if exc_type else "", "", "", "", {}, result, 0.1,
        )  # fmt: skip

    cells = {
        ("current", "count"): ran(2.0),
        ("current", "names"): ran({"cond": 1.0, "integer_pow": 1.0}),
        ("current", "runs"): ran(None),
        ("current", "fails"): ran(None, "ValueError"),
    }
    table = VersionTable(["count", "names", "runs", "fails"], ["current"], cells).table()
    assert [c.text for c in table.rows[0][2:]] == [
        "2",
        "cond: 1, integer_pow: 1",
        "OK",
        "ValueError",
    ]

"""casebook.cases: the registry is the one home of each case, and every other place agrees.

The README and introduction tables are the rendered registry; ``_toc.yml`` lists every case
notebook in registry order; each notebook's card has the registry's issue link, opened date
and first fixed release, and cites a key of ``book/references.bib``; each expected error is
the one the notebook asserts (each check set-up's verdict is in ``tests/test_check.py``).
The ``check_*(case, root)`` functions also run on a case scaffolded into a temporary copy
(``tests/test_sync.py``, the path of a new case).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from test_notebooks import ANATOMY_CHECKS

from casebook import cases, explain as _explain
from casebook.cases import Case
from casebook.maintainer import sync
from casebook.maintainer.sync import _card as card_text, _tables as tables, scaffold
from casebook.maintainer.workshop import plan
from casebook.status import board

ROOT = Path(__file__).resolve().parent.parent
IDS = [c.key for c in cases.CASES]


def _card(case: Case, root: Path) -> str:
    """The case's facts table (``| **Upstream** | ...``): under the card, near the top."""
    cells = json.loads((root / case.notebook).read_text())["cells"]
    markdown = ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
    return next((m for m in markdown if "| **Upstream** |" in m), markdown[0])


def _row(card: str, name: str) -> str:
    m = re.search(rf"^\| \*\*{name}\*\* \| (.*) \|$", card, re.M)
    assert m, f"the card has no '{name}' row"
    return m.group(1)


def check_tables(all_cases: tuple[Case, ...], root: Path) -> None:
    for file in tables.FILES:
        table = tables.current((root / file).read_text())
        assert table == tables.render(file, all_cases), (
            f"{file}: the case table is not the registry's; run `python3 -m casebook sync`"
        )
        for case in all_cases:
            assert case.issue.url in table and Path(case.docname).name in table
            # teach.md opens the page's plain twin (handouts/pages/), the others the page
            assert case.docname in table or file == "book/teach.md"
            # the Colab links of book/teach.md name each page, not what breaks
            assert case.summary in table or file == "book/teach.md"


def check_toc(all_cases: tuple[Case, ...], root: Path) -> None:
    listed = re.findall(r"^\s*- file: (notebooks/\S+)$", (root / "_toc.yml").read_text(), re.M)
    assert listed == [c.docname for c in all_cases], "_toc.yml: cases missing or out of order"
    notebooks = sorted(
        p.relative_to(root).with_suffix("").as_posix()
        for p in (root / "notebooks").glob("[0-9][0-9]-*.ipynb")
    )
    assert notebooks == sorted(listed), "a notebook is not a registry case, or the reverse"


def check_card(case: Case, root: Path) -> None:
    card = _card(case, root)
    upstream = _row(card, "Upstream")
    assert f"[{case.issue.label}]({case.issue.url})" in upstream
    assert f"opened {case.issue.opened}" in upstream
    if case.issue.closed:
        assert f"closed {case.issue.closed}" in upstream
    assert f"{{cite}}`{case.issue.bib_key}`" in upstream, "the card must cite the issue"
    assert _row(card, "First fixed release").startswith(case.first_fixed_text)
    libraries = _row(card, "Libraries")
    assert all(lib in libraries for lib in case.libraries), libraries
    affected = _row(card, "Affected releases")
    assert all(spec.split("==")[1] in affected for spec in case.affected), affected
    assert all(commit in card for commit in case.fix_commits)
    bib = (root / "book" / "references.bib").read_text()
    assert re.search(r"@\w+\{" + re.escape(case.issue.bib_key) + ",", bib), (
        f"book/references.bib has no entry {case.issue.bib_key}"
    )
    assert case.issue.url in bib


def check_case(case: Case, all_cases: tuple[Case, ...], root: Path) -> None:
    """Everything a case must satisfy against a checkout at ``root``."""
    check_card(case, root)
    assert case.docname.startswith(f"notebooks/{case.number:02d}-{case.key}-")
    assert all(t.case == case.docname for t in case.triggers)
    # Reading order, each number once; a gap is a case being added beside this one on a
    # parallel branch (`casebook new --number NN`), closed when that branch merges.
    numbers = [c.number for c in all_cases]
    assert numbers == sorted(set(numbers)) and numbers[0] == 1, numbers


@pytest.mark.parametrize("case", cases.CASES, ids=IDS)
def test_case_agrees_with_its_notebook_and_the_bib(case):
    check_case(case, cases.CASES, ROOT)


def test_tables_and_toc_are_the_registry():
    check_tables(cases.CASES, ROOT)
    check_toc(cases.CASES, ROOT)


def test_the_board_is_built_from_the_registry():
    """Each case's own trigger first, then the problems the cases found, then the check's."""
    keys = [t.key for t in board.BOARD]
    assert keys == [c.issue.label for c in cases.CASES] + [
        "sticky NaN",
        "mask function",
        "monitor state",
        "DoG bf16",
        "inject dtype",
        "lars/muon masks",
        "mixed-dtype state",
        "scale_by_muon default",
        "GaLore None leaves",
        "SM3 scalar",
        "apply_if_finite dtype",
        "donated init state",
        "line search value dtype",
    ]
    assert len(set(keys)) == len(keys)
    assert all(t.recorded in cases.STATUSES for t in board.BOARD)


def test_lookup_by_key_and_label():
    assert cases.get("optax-828") is cases.get("optax#828") is cases.CASES[0]
    with pytest.raises(KeyError, match="no case"):
        cases.get("optax-1")


def test_a_broken_card_is_caught(tmp_path):
    """The card check can fail: a first fixed release that the card does not state."""
    from dataclasses import replace

    case = replace(cases.get("optax-1210"), first_fixed="optax==0.2.4")
    with pytest.raises(AssertionError):
        check_card(case, ROOT)


# ------------------------------------------------------------- a copy of the checkout

INPUTS = ("README.md", "_config.yml", "_toc.yml", "casebook/check/families.toml")
"""The files of the checkout that sync reads or writes (with notebooks/, book/ and the case
folders): the root's, and the families' data."""


def _copy(tmp_path: Path) -> Path:
    """What sync reads and writes, copied to ``tmp_path``: the case folders, the pages, the
    book's Markdown, the handouts and the root's files."""
    root = tmp_path / "checkout"
    skip = shutil.ignore_patterns("__pycache__", "measurements", "_ext", "_static")
    shutil.copytree(ROOT / "casebook" / "cases", root / "casebook" / "cases", ignore=skip)
    shutil.copytree(ROOT / "notebooks", root / "notebooks", ignore=skip)
    shutil.copytree(ROOT / "book", root / "book", ignore=skip)
    shutil.copytree(ROOT / "handouts", root / "handouts", ignore=skip)
    (root / "casebook" / "check").mkdir()
    for file in INPUTS:
        shutil.copy(ROOT / file, root / file)
    return root


def _files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def _markdown(page: Path) -> str:
    cells = json.loads(page.read_text())["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


# ------------------------------------------------------------------ the path of a new case


NEW_CASE = ["optax-9999", "--issue", "https://github.com/google-deepmind/optax/issues/9999"]
NEW_CASE += ["--title", 'A "new" bug', "--opened", "2026-01-02"]
"""The case the tests below scaffold, one for both: with one table of contents and one
bibliography, the second's plain render writes only the pages that differ, not the book."""


def test_a_new_case_walks_the_documented_path(tmp_path):
    """CONTRIBUTING.md's path: ``new``; fill the folder's data and programs; the story; a bib
    entry; ``sync``. Only the case's folder, its notebook, ``_toc.yml`` and the bib are
    touched by hand; the rest is generated, and the case is on the Errors page, in
    ``explain``, on the board and in the workshop plan."""
    root = _copy(tmp_path)
    before = _files(root)
    nn = f"{max(c.number for c in cases.load(root / 'casebook' / 'cases')) + 1:02d}"
    args = [*NEW_CASE, "--root", str(root)]
    assert scaffold.main([*args, "--no-sync"]) == 0
    assert scaffold.main([*args, "--no-sync"]) == 2  # the folder exists already
    taken = ["optax-9998", *args[1:], "--number", "1", "--no-sync"]
    assert scaffold.main(taken) == 2  # a number another case holds
    folder = root / "casebook" / "cases" / "optax_9999"

    # Fill the data and a one-line program: the wrong code, its message, the card's block.
    for name in ("wrong", "reporter"):
        (folder / "scripts" / f"{name}.py").write_text("1 / 0\n")
    facts = folder / "case.toml"
    _edit(
        facts,
        "'''TODO: the message's first lines, verbatim (no \"ExcType: \")'''",
        "'division by zero'",
    )
    _edit(facts, 'exc_type = "TypeError"\nstack', 'exc_type = "ZeroDivisionError"\nstack')
    _edit(
        facts,
        "today = '''TODO: today's message, verbatim'''",
        "today = 'ZeroDivisionError: division by zero'",
    )
    hand = {k for k, v in _files(root).items() if before.get(k) != v}
    outside = {p for p in hand if not p.startswith("casebook/cases/optax_9999/")}
    notebook = f"notebooks/{nn}-optax-9999-a-new-bug.ipynb"
    assert outside == {notebook, "_toc.yml", "book/references.bib"}, outside
    assert {p.removeprefix("casebook/cases/optax_9999/") for p in hand - outside} == {
        "case.toml",
        "__init__.py",
        "scripts/wrong.py",
        "scripts/fix.py",
        "scripts/reporter.py",
    }

    written = {p.relative_to(root).as_posix() for p in sync.sync(root)}
    assert not sync.stale(root)
    assert {notebook, "README.md", "book/intro.md", "book/errors.md", "book/teach.md"} <= written
    new = cases.load(root / "casebook" / "cases")
    case = new[-1]
    assert (case.key, case.number, case.issue.label) == ("optax-9999", int(nn), "optax#9999")

    # The card and the repro cell are the data's; the page's checks hold on the data's text.
    cells = json.loads((root / notebook).read_text())["cells"]
    assert "".join(cells[0]["source"]) == card_text.card_markdown(case)
    repro = next(c for c in cells if card_text.REPORTER_TAG in c["metadata"].get("tags", []))
    assert "".join(repro["source"]).split("\n", 1)[1] == "1 / 0"
    check = next(c for c in cells if card_text.CHECK_TAG in c["metadata"].get("tags", []))
    assert "".join(check["source"]) == card_text.card_check(case)
    assert case.today_shown("ZeroDivisionError", "division by zero")
    for check in ANATOMY_CHECKS:
        check(root / notebook, root)
    check_case(case, new, root)
    check_tables(new, root)
    check_toc(new, root)

    # The Errors page, explain, the board and the plan know it.
    assert "ZeroDivisionError: division by zero" in (root / "book" / "errors.md").read_text()
    found = _explain.find(
        "Traceback (most recent call last):\nZeroDivisionError: division by zero", new
    )
    assert found and found[0][0].key == "optax-9999"
    assert "optax#9999" in [t.key for t in cases.board_triggers(new)]
    teach = (root / "book" / "teach.md").read_text()
    assert case.workshop["title"] in teach and plan.NOT_MEASURED in teach
    twin = root / "handouts" / "pages" / Path(notebook).name
    assert twin.is_file(), "sync wrote no plain twin of the new page for its Colab button"
    assert f"/handouts/pages/{twin.name})" in teach, "sync wrote no Colab link for the new case"
    handout = root / "handouts" / "student" / Path(notebook).name
    assert handout.is_file() and f"/handouts/student/{handout.name})" in teach, "no handout"
    # the new case joins the cases not yet timed (any other is test_workshop.py's to report)
    assert plan.unmeasured(cases=new) == [*plan.unmeasured(), f"{nn}-optax-9999-a-new-bug"]
    assert "optax-9999" in (root / "README.md").read_text()


def test_a_case_of_a_kind_no_case_has_yet_needs_no_code(tmp_path):
    """A silent wrong number (``symptom = "wrong-number"``, a kind of
    ``casebook/cases/symptoms.toml`` that no case has yet) is scaffolded, filled as data
    and synced: its card takes the kind's heading and its check asserts what ``wrong.py``
    prints; a kind the file does not hold fails the registry, naming the kinds it has."""
    root = _copy(tmp_path)
    assert scaffold.main([*NEW_CASE, "--root", str(root), "--no-sync"]) == 0
    folder = root / "casebook" / "cases" / "optax_9999"
    (folder / "scripts" / "wrong.py").write_text("print('sum: 5.0')\n")
    facts = folder / "case.toml"
    text = re.sub(r"(?ms)^\[\[message\]\].*?(?=^# What marks)", "", facts.read_text())
    text = text.replace('# symptom = "error"', 'symptom = "wrong-number"')
    facts.write_text(
        text.replace("today = '''TODO: today's message, verbatim'''", "today = 'sum: 5.0'")
    )
    sync.sync(root)
    case = cases.load(root / "casebook" / "cases")[-1]
    assert (case.key, case.raises) == ("optax-9999", False)
    heading = cases.symptoms()["wrong-number"]["heading"]
    cells = json.loads((root / case.notebook).read_text())["cells"]
    assert f"{{admonition}} {heading}\n" in "".join(cells[0]["source"])
    check = next(c for c in cells if card_text.CHECK_TAG in c["metadata"].get("tags", []))
    assert "card.today_printed(wrong.stdout)" in "".join(check["source"])
    assert case.today_printed("sum: 5.0\n")

    facts.write_text(facts.read_text().replace('symptom = "wrong-number"', 'symptom = "slowdown"'))
    with pytest.raises(
        ValueError,
        match=r"'slowdown' is no kind of case in symptoms\.toml \(error, leak, wrong-number\)",
    ):
        cases.load(root / "casebook" / "cases")

"""The workshop: student editions a participant can run in Colab, and a plan that fits.

Each student edition runs top to bottom with its exercise cells left empty, and the
teacher edition's solutions then pass in the same kernel; no raw MyST reaches a student;
solutions are plain library code; the plan in ``book/teach.md`` is the one the stored
figures add up to, and it fits its sessions with the slack it promises.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from nbclient import NotebookClient

from casebook.project import ROOT
from casebook.tools import colab
from casebook.workshop import BOOK_URL, EXERCISE_TAG, PAGES, _plain, cut, launch, plan
from casebook.workshop._editions import CHECK_TAG

EDITIONS = {page: cut(page) for page in PAGES}
PAGE = "notebooks/01-optax-828-zero-nans-multisteps"


def _cells(notebook: dict, kind: str) -> list[str]:
    return ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == kind]


def _tagged(notebook: dict, tag: str) -> list[dict]:
    return [c for c in notebook["cells"] if tag in c.get("metadata", {}).get("tags", [])]


# ------------------------------------------------------------------------ rendering

ROLE = re.compile(r"\{[\w:-]+\}$")
TARGET = re.compile(r"^\([\w-]+\)=\s*$", re.M)


def raw_myst(markdown: str) -> list[str]:
    """The MyST that ``markdown`` shows raw where only CommonMark is rendered (Colab,
    Jupyter): a role (``{name}`` then a code span), a directive (a fence whose info is
    ``{name}``, or ``:::{name}``), a target line (``(label)=``)."""
    found = []
    for token in MarkdownIt("commonmark").parse(markdown):
        if token.type == "fence" and token.info.startswith("{"):
            found.append(f"```{token.info}")
        if token.type != "inline":
            continue
        found += [f":::{m}" for m in re.findall(r"(?m)^:{3,}(\{[\w:-]+\})", token.content)]
        found += TARGET.findall(token.content)
        children = token.children or []
        for text, code in zip(children, children[1:]):
            if text.type == "text" and code.type == "code_inline" and ROLE.search(text.content):
                found.append(f"{ROLE.search(text.content).group(0)}`{code.content}`")
    return found


def test_raw_myst_finds_each_kind_of_markup():
    """The check the tests below rely on finds every kind of markup Colab shows raw, and
    nothing in plain Markdown (a code fence, a link, a `{...}` in a code span)."""
    myst = "See {cite}`optax828`.\n\n(case1-repro)=\n\n```{exercise}\nx\n```\n\n:::{dropdown} T\nx\n:::\n"
    assert raw_myst(myst) == [
        "{cite}`optax828`",
        "(case1-repro)=",
        "```{exercise}",
        ":::{dropdown}",
    ]
    plain = "A [link](https://x.org), `{cite}`, and\n\n```python\nd = {1: 2}\n```\n"
    assert raw_myst(plain) == []


def test_roles_become_links_to_the_published_book():
    """A citation, a cross-reference to a section, to an exercise and to a page: each is
    the web page's text, linked to the published book."""
    text = "\n".join(m for _, m in _plain.render_book()[PAGE] if m)
    assert "[optax#828](https://github.com/google-deepmind/optax/issues/828)" in text
    assert re.search(
        r"\[\[TheMr33, 2024\]\(" + re.escape(BOOK_URL) + r"book/references\.html#id\d+\)\]", text
    )
    page = BOOK_URL + PAGE + ".html"
    assert f"[Exercise 1.1]({page}#case1-ex1)" in text
    assert f"[the sticky NaN]({page}#case1-sticky-nan)" in text
    assert f"[primer]({BOOK_URL}book/how-to-read.html)" in text
    assert "(the number the cell above prints)" in text  # {glue:text}: read without outputs
    assert raw_myst(text) == []


def test_a_code_cell_the_tool_changed_is_refused_not_merged():
    """The tool's notebook is cut into one piece per page cell; a code cell must come back
    word for word, or the merge would give a cell the wrong tags."""
    page = {"cells": [{"cell_type": "code", "source": "x = 1", "metadata": {"tags": ["t"]}}]}
    sentinel = {"cell_type": "code", "source": _plain.SENTINEL}
    came = {"cells": [{"cell_type": "code", "source": "x = 1"}, sentinel]}
    assert _plain._pieces(came, page, "p") == [(page["cells"][0], None)]
    changed = {"cells": [{"cell_type": "code", "source": "x = 2"}, sentinel]}
    with pytest.raises(_plain.Mismatch, match="came back as"):
        _plain._pieces(changed, page, "p")
    with pytest.raises(_plain.Mismatch, match="1 cells, the tool's notebook 0"):
        _plain._pieces({"cells": []}, page, "p")


# ------------------------------------------------------------------------- editions


@pytest.mark.parametrize("page", PAGES)
def test_no_raw_myst_reaches_a_student(page):
    """Every Markdown cell of both editions, and of the committed handout, rendered as
    CommonMark shows no MyST."""
    handout = ROOT / "handouts" / "student" / f"{Path(page).name}.ipynb"
    for notebook in (
        EDITIONS[page].student,
        EDITIONS[page].teacher,
        json.loads(handout.read_text()),
    ):
        for text in _cells(notebook, "markdown"):
            assert raw_myst(text) == [], text[:300]


@pytest.mark.parametrize("page", PAGES)
def test_a_student_edition_is_the_card_the_story_and_the_exercises(page):
    student = EDITIONS[page].student
    markdown = "\n".join(_cells(student, "markdown"))
    assert "## The record" not in markdown and "## Benchmark" not in markdown
    source = (ROOT / f"{page}.md").read_text()
    labels = re.findall(r"^:label: ([\w-]+)", source, re.M)
    blanks = _tagged(student, EXERCISE_TAG)
    assert len(blanks) == len(labels)
    assert all("".join(c["source"]) == "" for c in blanks)
    assert not any(
        tag in c.get("metadata", {}).get("tags", [])
        for c in student["cells"]
        for tag in ("remove-input", "remove-cell", "benchmark")
    )
    if "## Benchmark" in source:
        with_bench = cut(page, benchmarks=True).student
        assert "## Benchmark" in "\n".join(_cells(with_bench, "markdown"))


@pytest.mark.parametrize("page", PAGES)
def test_solutions_are_plain_library_code_with_at_most_the_check(page):
    teacher = EDITIONS[page].teacher
    for cell in _tagged(teacher, EXERCISE_TAG):
        if CHECK_TAG in cell["metadata"]["tags"]:
            continue
        source = "".join(cell["source"])
        assert not source.lstrip().startswith("%"), source[:200]
        imports = re.findall(r"^\s*(?:from|import) (casebook\S*)(?: import (.+))?", source, re.M)
        assert all(m == "casebook.check" and n.strip() == "check_optimizer" for m, n in imports), (
            imports
        )


@pytest.mark.parametrize("page", [p for p in PAGES if p.startswith("notebooks/")])
def test_each_exercise_says_what_a_correct_answer_prints(page):
    statements = [
        t for t in _cells(EDITIONS[page].student, "markdown") if t.startswith("### Exercise")
    ]
    assert statements
    for text in statements:
        assert "<summary>What a correct answer prints</summary>" in text, text[:200]


def test_the_set_up_cell_installs_only_what_the_edition_uses():
    lessons = EDITIONS["book/lessons"].student
    setup = _tagged(lessons, "casebook-setup")[0]
    assert "eras" not in "".join(setup["source"]).split("casebook[", 1)[1].split("]")[0]
    case1 = EDITIONS[PAGE].student
    assert colab.extras_of(case1["cells"])[:2] == ("history", "eras")


@pytest.mark.parametrize("page", PAGES)
def test_the_student_edition_runs_then_the_teacher_s_solutions_pass(page, tmp_path):
    """One kernel: the student edition top to bottom (answer cells empty), then every
    cell of the teacher's solutions and their checks."""
    edition = EDITIONS[page]
    notebook = json.loads(json.dumps(edition.student))
    solutions = _tagged(edition.teacher, EXERCISE_TAG)
    notebook["cells"] += json.loads(json.dumps(solutions))
    import nbformat

    nb = nbformat.from_dict(notebook)
    NotebookClient(
        nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    # execute() raised on the first failing cell; what is left to prove is that the
    # solutions were checked at all: every exercise of the edition has a check that ran.
    checks = [c for c in nb.cells if CHECK_TAG in c.metadata.get("tags", [])]
    assert len(checks) >= len(_tagged(edition.student, EXERCISE_TAG)), "an exercise has no check"
    assert all(c.execution_count for c in checks)


@pytest.mark.parametrize("path", colab.pages(), ids=lambda p: p.stem)
def test_each_page_has_a_plain_twin_for_colab_with_no_raw_myst(path):
    """The Colab launch button opens ``handouts/pages/NAME.ipynb`` (book/_ext/casebook_colab.py):
    it is committed, it is the page as sync writes it now (every code cell, with its tags),
    and its Markdown shows no MyST."""
    page = path.relative_to(ROOT).with_suffix("").as_posix()
    twin = ROOT / launch.path_of(page)
    expected = launch.notebooks()[twin]
    assert twin.read_text() == expected, f"{twin} is stale: run python3 -m casebook sync"
    cells = json.loads(expected)["cells"]
    source = json.loads(path.read_text())["cells"]
    assert [c for c in cells if c["cell_type"] == "code"] == [
        dict(c, source="".join(c["source"])) for c in source if c["cell_type"] == "code"
    ]
    for text in _cells(json.loads(expected), "markdown"):
        assert raw_myst(text) == [], text[:300]


# ----------------------------------------------------------------------------- plan


def test_the_plan_in_teach_md_is_the_one_the_figures_add_up_to():
    text = plan.TEACH.read_text()
    assert plan.render() in text, "run `python3 -m casebook sync`"


def test_the_plan_fits_its_sessions_with_the_slack_it_promises():
    assert plan.check() == []


def test_every_case_has_a_block_and_every_block_is_measured():
    """A case enters the plan from its ``case.toml`` (``[workshop]``), never by a hand edit
    of a list; until its student edition is timed, the plan says "not measured" and this
    fails."""
    from casebook import cases

    pages = {b.page for b in plan.blocks()}
    assert all(Path(c.docname).name in pages for c in cases.CASES)
    assert PAGES == plan.pages()
    late = plan.unmeasured()
    assert not late, f"not measured: {late}; run `python3 -m casebook workshop --colab-sim`"


@pytest.mark.parametrize("page", [p for p in PAGES if p.startswith("notebooks/")])
def test_the_card_s_check_stays_in_the_book(page):
    """The hidden cell that runs the card's code is the book's check: no edition has it,
    while each edition keeps the card itself."""
    for edition in (EDITIONS[page].student, EDITIONS[page].teacher):
        sources = ["".join(c["source"]) for c in edition["cells"]]
        assert not [s for s in sources if "_check_the_card" in s]
        assert "**You probably wrote**" in sources[0] and "**Do this**" in sources[0]


def test_an_edition_numbers_exercises_as_the_web_page() -> None:
    """The web page says "Exercise 5.3" (the book's chapter, then the exercise): so does
    the edition, each exercise a heading."""
    for page in PAGES:
        source = (ROOT / f"{page}.md").read_text()
        labels = re.findall(r"^:label: ([\w-]+)", source, re.M)
        chapter = re.match(r"(\d+)-", Path(page).name)
        want = (
            [f"### Exercise {int(chapter.group(1))}.{i}" for i in range(1, len(labels) + 1)]
            if chapter
            else []
        )
        markdown = "\n".join(_cells(EDITIONS[page].student, "markdown"))
        assert re.findall(r"(?m)^### Exercise .*$", markdown) == want, page


@pytest.mark.parametrize("page", PAGES)
def test_the_plan_s_figures_count_the_edition_as_it_is_now(page):
    """The plan's reading minutes come from the stored Colab-simulation figures: they must
    count the words of today's student edition, so that a page whose story was cut or grown
    is timed again (`python3 -m casebook workshop --colab-sim`) before the plan quotes it."""
    from casebook.workshop import timing

    stored = plan.load()[plan.COLAB]["pages"].get(Path(page).name)
    assert stored, f"not measured: {page}"
    now = timing.summarize(EDITIONS[page].student)
    for key in ("markdown_words", "code_words"):
        assert stored[key] == now[key], (
            f"{page}: {key} {stored[key]} stored, {now[key]} now; "
            "run `python3 -m casebook workshop --colab-sim` and `python3 -m casebook sync`"
        )


def test_the_handouts_are_the_student_editions_and_the_zips_hold_them(tmp_path):
    """The committed handouts are each workshop page's student edition as cut now, and
    the site's zips (written after an HTML build) hold them and the teacher editions."""
    import zipfile

    from casebook import workshop

    committed = workshop.handouts()
    assert len(committed) == len(PAGES)
    for path, text in committed.items():
        assert path.read_text() == text, f"{path} is stale: run python3 -m casebook sync"
        cells = json.loads(text)["cells"]
        assert not [c for c in cells if "check" in c["metadata"].get("tags", [])], path
    student, teacher = workshop.zip_handouts(tmp_path)
    with zipfile.ZipFile(student) as z:
        assert sorted(z.namelist()) == sorted(f"student/{p.name}" for p in committed)
    with zipfile.ZipFile(teacher) as z:
        assert len(z.namelist()) == len(PAGES)

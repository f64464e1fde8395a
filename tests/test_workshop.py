"""The workshop: student editions a participant can run in Colab, and a plan that fits.

No raw MyST reaches a student; solutions are plain library code; the plan in
``book/teach.md`` is the one the stored figures add up to, and it fits its sessions with
the slack it promises.

An edition is never run here: it is checked against the page it is cut from, whose run
(``pytest --nbmake``, in the same test command) executes every cell an edition keeps.

- **The page's run proves** that each kept cell, and each teacher's solution with the
  book's check after it, passes on the page's stack, in the page's kernel.
- **The static checks prove** that an edition's cells are that run's cells, in its order,
  with every name they read bound as it was there (``_binds`` and ``_loads``, the cut's
  own reading of a cell); that each student answer cell is empty and each teacher's
  solution block is the page's, each solution followed by its check.
- **One kernel here** runs the only code cells no page runs: the editions' set-up cells.

Before, each edition ran in a kernel of its own, the student's top to bottom and then the
teacher's solutions: that a kept cell passes is now the page's run; that nothing it needs
was dropped is the name check (a name, the ``%%on_release`` extension, jax's config and the
environment); that the solutions pass and are checked is the page's run with the
solution-block check; the set-up cell's run is the one-kernel test. What only a run of the
edition would see, and no check here does: a dropped cell's change, in place, to an object
a kept cell reads (``a.append(x)``), a name a cell reads before binding it itself
(``x = x + 1``), and a binding behind a line magic (``%time x = f()``).
"""

from __future__ import annotations

import ast
import functools
import json
import os
import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from nbclient import NotebookClient

from casebook.maintainer.tools import colab
from casebook.maintainer.workshop import BOOK_URL, EXERCISE_TAG, PAGES, _plain, cut, launch, plan
from casebook.maintainer.workshop._editions import CHECK_TAG, Edition, _binds, _loads, _python
from casebook.project import ROOT


@functools.cache
def editions() -> dict[str, Edition]:
    """Each page's editions, cut on first use, not at import: the cut renders the book with
    Sphinx (about 12 s), which every test worker would otherwise pay while collecting."""
    return {page: cut(page) for page in PAGES}


PAGE = "notebooks/01-optax-828-zero-nans-multisteps"
SETUP_TAG = colab.TAGS[0]


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


def test_a_render_is_kept_for_the_next_process_and_an_edit_renders_anew(monkeypatch):
    """The plain render is read from the cache folder by a later process (here: the
    in-process memo cleared, Sphinx forbidden); a page edited by one character renders."""
    first = _plain.render_book()
    _plain._kept.cache_clear()

    def no_sphinx(*args):
        raise AssertionError("rendered again")

    monkeypatch.setattr(_plain, "_render", no_sphinx)
    assert _plain.render_book() == first
    page = ROOT / f"{PAGE}.ipynb"
    edited = page.read_text().replace("optax", "optaks", 1)
    with pytest.raises(AssertionError, match="rendered again"):
        _plain.render_book(texts={page: edited})


def test_a_title_changed_on_one_page_is_rewritten_where_another_page_shows_it():
    """A render writes again only the pages that changed, and every page when one changed
    what another shows: the primer links page 1 by its title."""
    page = ROOT / f"{PAGE}.ipynb"
    title = "`MultiSteps` fails under `jit`"  # the link's text: MultiSteps fails under jit
    assert "MultiSteps fails under jit]" in _markdown_of(_plain.render_book()["book/how-to-read"])
    edited = page.read_text().replace(title, title + " (renamed)", 1)
    shown = _markdown_of(_plain.render_book(texts={page: edited})["book/how-to-read"])
    assert "MultiSteps fails under jit (renamed)]" in shown


def _markdown_of(plain: _plain.PlainPage) -> str:
    return "\n".join(markdown for _, markdown in plain if markdown)


def test_the_cache_keeps_the_most_recently_used_renders(tmp_path):
    for i in range(_plain.KEPT + 3):
        (tmp_path / f"{i}.json").write_text("{}")
        os.utime(tmp_path / f"{i}.json", (1000 + i, 1000 + i))
    _plain._evict(tmp_path)
    kept = sorted(int(p.stem) for p in tmp_path.glob("*.json"))
    assert kept == list(range(3, _plain.KEPT + 3))


def test_a_work_folder_held_elsewhere_is_not_shared_and_the_oldest_free_ones_go(tmp_path):
    """A second process renders in the next slot, not in the folder the first holds; past
    :data:`_plain.WORK_FOLDERS`, the least recently used folders go, unless held."""
    import fcntl

    for i in range(_plain.WORK_FOLDERS + 2):
        (tmp_path / f"work-old{i}-0").mkdir()
        os.utime(tmp_path / f"work-old{i}-0", (1000 + i, 1000 + i))
    with open(tmp_path / "work-old0-0.lock", "a") as held_elsewhere:
        fcntl.flock(held_elsewhere, fcntl.LOCK_EX)
        (tmp_path / "work-s-0.lock").touch()
        with open(tmp_path / "work-s-0.lock") as first:
            fcntl.flock(first, fcntl.LOCK_EX)  # a separate open file: another holder
            with _plain._work_folder(tmp_path, "work-s", {}) as work:
                work.mkdir()
    assert work.name == "work-s-1"
    left = {p.name for p in tmp_path.glob("work-*/")}
    assert left == {"work-s-1", "work-old0-0"} | {
        f"work-old{i}-0" for i in range(3, _plain.WORK_FOLDERS + 2)
    }


def test_the_free_work_folder_nearest_the_inputs_is_taken(tmp_path):
    """Of the free slots, the one a render would write least in: not the one an edit of
    a title left (undoing it would write every page again), nor one never finished."""
    for slot, text in ((0, "renamed"), (1, "as the book has it"), (2, "as the book has it")):
        src = tmp_path / f"work-s-{slot}" / "src"
        src.mkdir(parents=True)
        (src / "page.ipynb").write_text(text)
        (src / "primer.md").write_text("links the page")
    for slot in (0, 1):
        (tmp_path / f"work-s-{slot}" / "done").touch()  # slot 2's render never finished
    wanted = {"page.ipynb": "as the book has it", "primer.md": "links the page"}
    with _plain._work_folder(tmp_path, "work-s", wanted) as work:
        assert work.name == "work-s-1"
    with _plain._work_folder(tmp_path, "work-s", {**wanted, "new.md": ""}) as work:
        assert work.name == "work-s-1"  # one to write, against two in slot 0


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
        editions()[page].student,
        editions()[page].teacher,
        json.loads(handout.read_text()),
    ):
        for text in _cells(notebook, "markdown"):
            assert raw_myst(text) == [], text[:300]


@pytest.mark.parametrize("page", PAGES)
def test_a_student_edition_is_the_card_the_story_and_the_exercises(page):
    student = editions()[page].student
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


def _solution_prose(page: str) -> list[str]:
    """From the page's source, each paragraph of prose inside a solution block: its longest
    run of plain words (five or more), which any rendering of the paragraph keeps."""
    source = (ROOT / f"{page}.md").read_text()
    runs = []
    for block in re.findall(
        r"```\{solution-start\}.*?\n```\n(.*?)```\{solution-end\}", source, re.S
    ):
        prose = re.sub(r"```\{code-cell\}.*?\n```", "", block, flags=re.S)
        for paragraph in prose.split("\n\n"):
            words = re.findall(r"(?:[A-Za-z]+ ){4,}[A-Za-z]+", " ".join(paragraph.split()))
            if words:
                runs.append(max(words, key=len))
    return runs


@pytest.mark.parametrize("page", PAGES)
def test_a_solution_s_prose_is_the_teacher_s_only(page):
    """A solution's words and its code (solution and check cells) are kept from the
    student: a solution cell copied after its empty answer cell goes red."""
    student, teacher = (
        " ".join(" ".join(_cells(edition, "markdown")).split())
        for edition in (editions()[page].student, editions()[page].teacher)
    )
    for run in _solution_prose(page):
        assert run in teacher, run
        assert run not in student, f"the student edition shows a solution's words: {run!r}"
    code = [" ".join(c.split()) for c in _cells(editions()[page].student, "code")]
    for block in _solutions(page):
        for cell in block:
            solution = " ".join("".join(cell["source"]).split())
            shown = [c for c in code if solution and solution in c]
            assert not shown, f"the student edition holds a solution's code: {solution[:80]!r}"


@pytest.mark.parametrize("page", PAGES)
def test_solutions_are_plain_library_code_with_at_most_the_check(page):
    teacher = editions()[page].teacher
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
        t for t in _cells(editions()[page].student, "markdown") if t.startswith("### Exercise")
    ]
    assert statements
    for text in statements:
        assert "<summary>What a correct answer prints</summary>" in text, text[:200]


def test_the_set_up_cell_installs_only_what_the_edition_uses():
    lessons = editions()["book/lessons"].student
    setup = _tagged(lessons, "casebook-setup")[0]
    assert "eras" not in "".join(setup["source"]).split("casebook[", 1)[1].split("]")[0]
    case1 = editions()[PAGE].student
    assert colab.extras_of(case1["cells"])[:2] == ("history", "eras")


# ------------------------------------------------ editions, proved by the page's own run


def _page_code(page: str) -> tuple[dict, list[dict]]:
    """The page's notebook, and its code cells but its set-up cell (an edition has its own)."""
    notebook = json.loads((ROOT / f"{page}.ipynb").read_text())
    code = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    return notebook, [c for c in code if SETUP_TAG not in c.get("metadata", {}).get("tags", [])]


def _own_cells(edition: dict, kind: str) -> list[dict]:
    """The code cells of an edition that are not the page's: its set-up cell and, in a
    student edition, the empty answer cells."""
    own = {SETUP_TAG, EXERCISE_TAG} if kind == "student" else {SETUP_TAG}
    return [
        c
        for c in edition["cells"]
        if c["cell_type"] == "code" and own & set(c.get("metadata", {}).get("tags", []))
    ]


def _kept(page: str, kind: str) -> tuple[list[dict], list[bool]]:
    """The page's code cells, and which of them the edition keeps: each of its code cells
    (its own aside) is the next page cell with the same source."""
    _, code = _page_code(page)
    edition = getattr(editions()[page], kind)
    own = [id(c) for c in _own_cells(edition, kind)]
    kept, at = [False] * len(code), 0
    for cell in edition["cells"]:
        if cell["cell_type"] != "code" or id(cell) in own:
            continue
        source = "".join(cell["source"])
        while at < len(code) and "".join(code[at]["source"]) != source:
            at += 1
        assert at < len(code), (
            f"{kind} keeps a cell the page does not run, or out of order:\n{source[:300]}"
        )
        kept[at], at = True, at + 1
    return code, kept


def _tree(source: str) -> ast.AST:
    """The cell as Python, read as the cut reads it (``_python``); empty if it is not."""
    try:
        return ast.parse(_python(source))
    except SyntaxError:
        return ast.Module(body=[], type_ignores=[])


EXTENSION = "%load_ext"
"""Read as a name: bound by a cell that loads an extension, read by a cell magic."""

STATE = "(jax's config or the environment)"
"""Read as a name by every cell, bound by a cell that changes jax's config or an
environment variable: state a cell reads without naming it."""

_CHANGES_STATE = re.compile(
    r"\bconfig\.update\(|\bos\.environ\b(?:\[[^]]*\]\s*=|\.(?:update|pop)\()"
)


def _reads(source: str) -> set[str]:
    """The names a cell reads from the cells before it: the names it loads, less those it
    binds itself (its functions' parameters too); the extension, for a cell magic; the
    process's state."""
    params = {a.arg for a in ast.walk(_tree(source)) if isinstance(a, ast.arg)}
    magic = {EXTENSION} if source.startswith("%%") else set()
    return (_loads(source) - _binds(source) - params) | magic | {STATE}


def _bound(source: str) -> set[str]:
    """The names a cell binds; the extension, for a cell that loads one; the process's
    state, for a cell that changes it."""
    return (
        _binds(source)
        | ({EXTENSION} if "%load_ext" in source else set())
        | ({STATE} if _CHANGES_STATE.search(source) else set())
    )


@pytest.mark.parametrize("kind", ["student", "teacher"])
@pytest.mark.parametrize("page", PAGES)
def test_an_edition_keeps_cells_the_page_runs_in_the_page_s_order(page, kind):
    """Every code cell of an edition but its own (the set-up cell, a student's empty
    answer cells) is, source for source, a cell the page's nbmake run executes, in the
    page's order; so a kept cell that passes there is the same code here."""
    notebook, _ = _page_code(page)
    code, kept = _kept(page, kind)
    assert not notebook["metadata"].get("execution", {}).get("allow_errors"), page
    for cell, keep in zip(code, kept, strict=True):
        assert not (keep and "skip-execution" in cell.get("metadata", {}).get("tags", []))
    own = _own_cells(getattr(editions()[page], kind), kind)
    assert [SETUP_TAG in c["metadata"]["tags"] for c in own].count(True) == 1


@pytest.mark.parametrize("kind", ["student", "teacher"])
@pytest.mark.parametrize("page", PAGES)
def test_every_name_a_kept_cell_reads_is_bound_as_on_the_page(page, kind):
    """A name a kept cell reads from the cells before it has its last binding before it,
    on the page, in a kept cell: no cell the edition drops (a hidden cell, the benchmark,
    a solution in the student edition) binds what the edition then needs. The same
    reading of cells as the cut's (``_binds``, ``_loads``, magics through ``_python``)."""
    code, kept = _kept(page, kind)
    binds = [_bound("".join(c["source"])) for c in code]
    missing = []
    for i in (i for i, keep in enumerate(kept) if keep):
        source = "".join(code[i]["source"])
        for name in sorted(_reads(source)):
            last = next((j for j in range(i - 1, -1, -1) if name in binds[j]), None)
            if last is not None and not kept[last]:
                bound = "".join(code[last]["source"])[:120]
                missing.append(
                    f"{name!r}: read by\n{source[:120]}\nbound by a dropped cell\n{bound}"
                )
    assert not missing, "\n\n".join(missing)


def _solutions(page: str) -> list[list[dict]]:
    """The code cells of each solution block of the page (``solution-start`` to
    ``solution-end``), in order."""
    notebook, _ = _page_code(page)
    blocks: list[list[dict]] = []
    inside = False
    for cell in notebook["cells"]:
        source = "".join(cell["source"]).lstrip()
        if cell["cell_type"] == "markdown":
            if source.startswith("```{solution-start}"):
                blocks.append([])
                inside = True
            elif source.startswith("```{solution-end}"):
                inside = False
        elif inside:
            blocks[-1].append(cell)
    return blocks


@pytest.mark.parametrize("page", PAGES)
def test_each_teacher_solution_is_the_page_s_followed_by_its_check(page):
    """The teacher's cells after each exercise are the page's solution block, cell for
    cell: the solution, then the book's check of it, tagged ``check``; each solution cell
    is followed by a check. The page runs them all, so its run proves the solutions pass."""
    teacher = editions()[page].teacher
    groups: list[list[dict]] = []
    for cell in teacher["cells"]:
        if cell["cell_type"] == "markdown" and "".join(cell["source"]) == "**Solution**":
            groups.append([])
        elif EXERCISE_TAG in cell.get("metadata", {}).get("tags", []):
            groups[-1].append(cell)
    blocks = _solutions(page)
    assert len(groups) == len(blocks) == len(_tagged(editions()[page].student, EXERCISE_TAG))
    for block, group in zip(blocks, groups, strict=True):
        hidden = [
            bool({"remove-input", "remove-cell"} & set(c["metadata"].get("tags", [])))
            for c in block
        ]
        assert ["".join(c["source"]) for c in group] == ["".join(c["source"]) for c in block]
        assert [CHECK_TAG in c["metadata"]["tags"] for c in group] == hidden
        assert not hidden[0], "a solution block starts with its solution"
        followed = [hidden[i + 1] for i in range(len(block) - 1) if not hidden[i]]
        assert len(followed) == hidden.count(False) and all(followed), (
            "a solution has no check after it"
        )


def test_the_cells_no_page_runs_run_in_one_kernel(tmp_path):
    """An edition's own code cells are its set-up cell and empty answer cells (the rest
    are the page's, ``test_an_edition_keeps_cells_the_page_runs_in_the_page_s_order``):
    the set-up cells, one of each source, run here, in one kernel."""
    import nbformat

    sources = sorted(
        {
            "".join(c["source"])
            for page in PAGES
            for kind in ("student", "teacher")
            for c in _tagged(getattr(editions()[page], kind), SETUP_TAG)
        }
    )
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    assert sources and all(c.execution_count for c in nb.cells)


def test_the_page_written_as_a_myst_notebook_has_a_twin_too():
    """how-to-read's code cells (the jaxpr primer) are a notebook's: its launch buttons open
    a twin as the executed pages' do, so it is among the pages that get one."""
    assert [p.relative_to(ROOT).as_posix() for p in launch.pages() if p.suffix == ".md"] == [
        "book/how-to-read.md"
    ]


@pytest.mark.parametrize("path", launch.pages(), ids=lambda p: p.stem)
def test_each_page_has_a_plain_twin_for_colab_with_no_raw_myst(path):
    """The launch buttons open ``handouts/pages/NAME.ipynb`` (book/_ext/casebook_launch.py):
    it is committed, it is the page as sync writes it now (every code cell, with its tags),
    and its Markdown shows no MyST. The executed pages have one, and so does the page written
    as a MyST notebook (how-to-read), whose ``.md`` Colab cannot open."""
    page = path.relative_to(ROOT).with_suffix("").as_posix()
    twin = ROOT / launch.path_of(page)
    expected = launch.notebooks()[twin]
    assert twin.read_text() == expected, f"{twin} is stale: run python3 -m casebook sync"
    cells = json.loads(expected)["cells"]
    source = json.loads(_plain.as_notebook(path, path.read_text()))["cells"]
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
    for edition in (editions()[page].student, editions()[page].teacher):
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
        markdown = "\n".join(_cells(editions()[page].student, "markdown"))
        assert re.findall(r"(?m)^### Exercise .*$", markdown) == want, page


@pytest.mark.parametrize("page", PAGES)
def test_the_plan_s_figures_count_the_edition_as_it_is_now(page):
    """The plan's reading minutes come from the stored Colab-simulation figures: they must
    count the words of today's student edition, so that a page whose story was cut or grown
    is timed again (`python3 -m casebook workshop --colab-sim`) before the plan quotes it."""
    from casebook.maintainer.workshop import timing

    stored = plan.load()[plan.COLAB]["pages"].get(Path(page).name)
    assert stored, f"not measured: {page}"
    now = timing.summarize(editions()[page].student)
    for key in ("markdown_words", "code_words"):
        assert stored[key] == now[key], (
            f"{page}: {key} {stored[key]} stored, {now[key]} now; "
            "run `python3 -m casebook workshop --colab-sim` and `python3 -m casebook sync`"
        )


def test_the_handouts_are_the_student_editions_and_the_zips_hold_them(tmp_path):
    """The committed handouts are each workshop page's student edition as cut now, and
    the site's zips (written after an HTML build) hold them and the teacher editions."""
    import zipfile

    from casebook.maintainer import workshop

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

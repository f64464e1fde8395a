"""A page's student and teacher editions: the card, the story and the exercises.

A student edition is what a participant opens in Colab: the page's card, its story and
its exercises, each exercise followed by one empty code cell; the record, the benchmark
(unless asked for) and the book's hidden checks are left out, and the Markdown is plain,
as sphinx-tojupyter renders it (:mod:`casebook.maintainer.workshop._plain`): exercises numbered as on
the web page, citations and cross-references as links to the published book. The teacher
edition is the same notebook with the solutions in place of the empty cells, each followed
by the book's check of it.

A hidden cell is kept when a later cell uses a name it binds (or it loads an extension),
so that the edition runs top to bottom without the rest of the book's assertions. The
set-up cell is the page's, recomputed for what the edition uses
(:func:`casebook.maintainer.tools.colab.extras_of`): an edition without the benchmark may need less.

Standard library only, but for the Markdown: :mod:`._plain` runs Sphinx, with what the
``book`` extra installs. The name analysis reads a cell magic's body as Python and blanks
line magics (``_python``); ``tests/test_workshop.py`` checks each edition against its page's
run with the same reading.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import json
import re
from pathlib import Path

from casebook.maintainer.tools import colab
from casebook.maintainer.workshop import _plain
from casebook.maintainer.workshop.plan import pages
from casebook.project import BOOK_URL, ROOT

PAGES = pages()
"""The pages a workshop uses, in the order of the plan (``book/teach.md``): each case that
has a ``[workshop]`` block in its ``case.toml``, and the lessons (:func:`plan.pages`)."""

EXERCISE_TAG = "exercise"
"""The tag of a student edition's empty answer cell (and of a teacher's solution cell)."""

CHECK_TAG = "check"
"""The tag of a teacher edition's cell that checks the solution before it (the book's
hidden cell: it may use the book's helpers; the solution itself may not)."""

HIDDEN = {"remove-input", "remove-cell"}
BOOK_ONLY = {"casebook-setup", "card-check"}
"""Cells no edition keeps: the page's set-up cell (each edition gets its own) and the
hidden cell that runs the card's code (the book's check, written by ``sync``)."""
LEFT_OUT = ("The record",)
SOLUTION_MARKERS = ("```{solution-start}", "```{solution-end}")
BENCHMARK = "Benchmark"


@dataclasses.dataclass(frozen=True)
class Edition:
    """The two editions of one page, as notebooks (``dict``, nbformat 4)."""

    page: str
    student: dict
    teacher: dict

    @property
    def name(self) -> str:
        return Path(self.page).name


def _source(cell: dict) -> str:
    return "".join(cell["source"])


def _tags(cell: dict) -> set[str]:
    return set(cell.get("metadata", {}).get("tags", []))


def _code(source: str, tags: list[str] | None = None) -> dict:
    return {
        "cell_type": "code",
        "execution_count": None,
        "metadata": {"tags": tags} if tags else {},
        "outputs": [],
        "source": source,
    }


def _markdown(source: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": source}


def _split_sections(cells: list[dict]) -> list[tuple[str, dict]]:
    """``(section, cell)`` for every cell, Markdown cells split at their ``## `` headings
    so that a section starts with its own cell."""
    out, section = [], ""
    for cell in cells:
        if cell["cell_type"] != "markdown":
            out.append((section, cell))
            continue
        for part in re.split(r"(?m)^(?=## )", _source(cell)):
            if not part.strip():
                continue
            heading = re.match(r"## (.+)", part)
            section = heading.group(1).strip() if heading else section
            out.append((section, _markdown(part)))
    return out


# ------------------------------------------------------------------ name analysis


def _python(source: str) -> str:
    """The cell as Python: a cell magic's body, line magics and shell lines blanked."""
    lines = source.split("\n")
    if lines and lines[0].startswith("%%"):
        lines = lines[1:]
    return "\n".join("" if re.match(r"\s*[%!]", x) else x for x in lines)


def _binds(source: str) -> set[str]:
    names = set(re.findall(r"--as\s+(\w+)", source.split("\n", 1)[0]))
    try:
        tree = ast.parse(_python(source))
    except SyntaxError:
        return names
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def _loads(source: str) -> set[str]:
    try:
        tree = ast.parse(_python(source))
    except SyntaxError:
        return set(re.findall(r"\b[A-Za-z_]\w*\b", source))
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def _keep_needed(cells: list[tuple[dict, bool]]) -> list[dict]:
    """The cells marked kept, plus each unmarked one that binds a name a later kept
    cell loads, or loads an extension (``%load_ext``)."""
    needed: set[str] = set()
    kept = []
    for cell, keep in reversed(cells):
        source = _source(cell)
        if cell["cell_type"] == "code" and not keep:
            keep = bool((_binds(source) - {"_"}) & needed) or "%load_ext" in source
        if keep:
            kept.append(cell)
            if cell["cell_type"] == "code":
                needed |= _loads(source)
    return kept[::-1]


# ------------------------------------------------------------------------ cutting


def _notebook(cells: list[dict], meta: dict, name: str) -> dict:
    for i, cell in enumerate(cells):
        cell["id"] = f"{name[:2]}-{i:03d}"
        cell["source"] = "".join(cell["source"])  # one string, as nbformat writes it
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": meta.get("kernelspec", {"name": "python3", "display_name": "Python 3"}),
            "language_info": {"name": "python"},
            "colab": {"provenance": [], "toc_visible": True},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


INTRO = {
    "en": (
        "Student edition: each exercise is followed by an empty cell for your answer; its "
        "statement says what a correct answer prints.",
        "Teacher edition: the solutions follow each exercise, each checked by the cell after it.",
        " Run the cells in order (the first installs what the page needs; in Colab a historical "
        "release downloads on first use). The full page, with the record that proves every "
        "claim, is [on the web]({url}).",
    ),
    "zh_CN": (
        "学生版：每个练习后面都有一个空单元格供你作答；题面说明了正确答案会打印什么。",
        "教师版：每个练习后面是答案，每个答案都由其后的单元格检查。",
        "请按顺序运行单元格（第一个单元格安装本页所需的一切；在 Colab 中，历史版本在首次使用时"
        "下载）。完整页面以及证明每个结论的记录[在网页上]({url})。",
    ),
}
"""An edition's first line, in each language of the book (:mod:`casebook.maintainer.tools.i18n` builds
the pages' own text from its catalogs; this line is the editions' own)."""


def _intro(page: str, teacher: bool, language: str = "en") -> dict:
    url = BOOK_URL + ("" if language == "en" else f"{language}/") + page + ".html"
    student, teacher_line, rest = INTRO[language]
    what = teacher_line if teacher else student
    return _markdown(f"*{what}{rest.format(url=url)}*")


def _rendered(plain: _plain.PlainPage) -> list[dict]:
    """The page's cells with their plain Markdown; a solution's markers keep their MyST
    (``{solution-start}``, ``{solution-end}``), which :func:`cut` reads and drops."""
    out = []
    for cell, markdown in plain:
        marker = _source(cell).lstrip().startswith(SOLUTION_MARKERS)
        if markdown is None or marker:
            out.append(cell)
        else:
            out.append(_markdown(markdown))
    return out


def cut(
    page: str,
    *,
    benchmarks: bool = False,
    root: Path = ROOT,
    notebook: dict | None = None,
    plain: _plain.PlainPage | None = None,
    language: str = "en",
) -> Edition:
    """The student and teacher editions of ``page`` (``"notebooks/01-..."``, no suffix),
    cut from its notebook under ``root``, or from ``notebook`` (the page as ``sync`` is
    about to write it); ``plain``: the page already rendered (:func:`_plain.render_book`),
    as ``sync`` renders every page at once, in ``language``."""
    if plain is None:
        texts = {root / f"{page}.ipynb": json.dumps(notebook)} if notebook is not None else {}
        plain = _plain.render_book(root, texts)[page]
    nb = notebook if notebook is not None else json.loads((root / f"{page}.ipynb").read_text())
    student: list[tuple[dict, bool]] = []
    teacher: list[tuple[dict, bool]] = []
    in_solution = False
    for section, cell in _split_sections(_rendered(plain)):
        if section in LEFT_OUT:
            break
        if section == BENCHMARK and not benchmarks:
            continue
        source, tags = _source(cell), _tags(cell)
        if cell["cell_type"] == "markdown":
            marker = source.lstrip()
            if marker.startswith(SOLUTION_MARKERS):
                in_solution = marker.startswith(SOLUTION_MARKERS[0])
                if in_solution:
                    student.append((_code("", [EXERCISE_TAG]), True))
                    teacher.append((_markdown("**Solution**"), True))
                # the marker's own fence goes; prose after it in the same cell stays, on
                # its side of the marker
                source = marker.split("\n```", 1)[1] if "\n```" in marker else ""
            text = source.strip()
            if text:  # a solution's own prose is the teacher's only, as its code is
                if not in_solution:
                    student.append((_markdown(text), True))
                teacher.append((_markdown(text), True))
            continue
        if tags & BOOK_ONLY:
            continue
        if in_solution:
            solution = copy.deepcopy(cell)
            solution["metadata"] = {"tags": [EXERCISE_TAG, *([CHECK_TAG] if tags & HIDDEN else [])]}
            teacher.append((solution, True))
            continue
        if "benchmark" in tags and not benchmarks:
            continue
        code = _code(source, sorted(tags - HIDDEN) or None)
        visible = not tags & HIDDEN
        student.append((code, visible))
        teacher.append((code, visible))
    editions = []
    for marked, is_teacher in ((student, False), (teacher, True)):
        kept = _keep_needed(marked)
        setup = _code(colab.setup_cell_source(extras=colab.extras_of(kept)), ["casebook-setup"])
        title, *rest = kept
        cells = copy.deepcopy([title, _intro(page, is_teacher, language), setup, *rest])
        editions.append(_notebook(cells, nb["metadata"], Path(page).name))
    return Edition(page, editions[0], editions[1])

"""Checks on the case notebooks as files: shape, hygiene and honesty of their tests.

Running them is nbmake's job (``pytest --nbmake notebooks/``); these checks catch what a
passing run cannot: outputs committed by accident, a case missing from the book, a
section out of order, a cell that runs an old release without asserting anything.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from casebook import releases

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))
CHAPTERS = sorted((ROOT / "book").glob("*.ipynb"))  # executed chapters: lessons, status board
ANATOMY = ["Reproduce", "Which releases are affected", "Root cause", "Fix A and Fix B", "Benchmark",
           "Takeaways", "Exercises"]


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text())["cells"]


def _source(cell: dict) -> str:
    src = cell["source"]
    return "".join(src) if isinstance(src, list) else src


def test_there_are_case_notebooks():
    assert NOTEBOOKS, "no notebooks/NN-*.ipynb found"


@pytest.mark.parametrize("path", NOTEBOOKS + CHAPTERS, ids=lambda p: p.name)
def test_committed_without_outputs(path):
    for i, cell in enumerate(_cells(path)):
        if cell["cell_type"] == "code":
            assert not cell.get("outputs") and cell.get("execution_count") is None, \
                f"{path.name} cell {i} has outputs; strip them before committing"


@pytest.mark.parametrize("path", NOTEBOOKS + CHAPTERS, ids=lambda p: p.name)
def test_listed_in_the_table_of_contents(path):
    assert f"{path.parent.name}/{path.stem}" in (ROOT / "_toc.yml").read_text()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_sections_follow_the_anatomy(path):
    headings = [line.lstrip("#").strip() for cell in _cells(path) if cell["cell_type"] == "markdown"
                for line in _source(cell).splitlines() if re.match(r"#{2,3} ", line)]
    positions = []
    for section in ANATOMY:
        found = [i for i, h in enumerate(headings) if h.startswith(section)]
        assert found, f"{path.name}: no section '{section}' (headings: {headings})"
        positions.append(found[0])
    assert positions == sorted(positions), f"{path.name}: sections out of order: {headings}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_historical_run_asserts_its_outcome(path):
    for i, cell in enumerate(_cells(path)):
        src = _source(cell)
        if src.startswith("%%on_release"):
            first = src.splitlines()[0]
            assert "--raises" in first or "--ok" in first, \
                f"{path.name} cell {i}: %%on_release without --raises or --ok asserts nothing"
        tags = cell.get("metadata", {}).get("tags", [])
        assert "raises-exception" not in tags, \
            f"{path.name} cell {i}: a raises-exception tag passes on any error; assert instead"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_release_specs_are_in_the_manifest(path):
    manifest = releases.load_manifest(releases.MANIFEST)
    text = "".join(_source(c) for c in _cells(path) if c["cell_type"] == "code")
    specs = set(re.findall(r"\b([a-z_]+==\d+\.\d+\.\d+)\b", text))
    assert specs, f"{path.name} runs no historical release"
    assert specs <= set(manifest), f"{path.name}: not in the manifest: {specs - set(manifest)}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_exercise_solutions_are_hidden(path):
    cells = _cells(path)
    start = next(i for i, c in enumerate(cells) if c["cell_type"] == "markdown"
                 and _source(c).startswith("## Exercises"))
    solutions = [c for c in cells[start:] if c["cell_type"] == "code"]
    assert solutions, f"{path.name}: exercises without solutions"
    for c in solutions:
        assert "hide-cell" in c.get("metadata", {}).get("tags", []), \
            f"{path.name}: an exercise solution is not hidden behind a toggle (tag hide-cell)"

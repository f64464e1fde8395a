"""Checks on the case notebooks as files: shape, hygiene and honesty of their tests.

Running them is nbmake's job (``pytest --nbmake notebooks/``); these checks catch what a
passing run cannot: outputs committed by accident, a case missing from the book, a
section out of order, a cell that runs an old release without asserting anything.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from casebook import releases

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))
CHAPTERS = sorted((ROOT / "book").glob("*.ipynb"))  # executed chapters: lessons, status board
ANATOMY = [
    "Reproduce",
    "Root cause",
    "Fix A and Fix B",
    "Benchmark",
    "Takeaways",
    "Exercises",
    "The record",
]
"""The story's sections, then the record (which holds, among the rest, "Which releases are
affected"): the card sits above them all."""


def exercise_cells(cells: list[dict]) -> list[dict]:
    """The cells of the Exercises section: from its heading to the next ``## `` heading
    (the record), or to the end."""
    start = next(
        i
        for i, c in enumerate(cells)
        if c["cell_type"] == "markdown" and "".join(c["source"]).startswith("## Exercises")
    )
    section = [cells[start]]
    for cell in cells[start + 1 :]:
        if cell["cell_type"] == "markdown" and re.match(r"## ", "".join(cell["source"])):
            break
        section.append(cell)
    return section


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text())["cells"]


def _source(cell: dict) -> str:
    src = cell["source"]
    return "".join(src) if isinstance(src, list) else src


def test_there_are_case_notebooks():
    assert NOTEBOOKS, "no notebooks/NN-*.ipynb found"


def test_the_pages_code_is_linted():
    """ruff over the pages and the book's extensions (ruff.toml; the package's own lint is
    ``tests/test_lint.py``, which reads no page)."""
    command = [sys.executable, "-m", "ruff", "check", "notebooks", "book"]
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, f"`ruff check notebooks book` found:\n{proc.stdout}{proc.stderr}"


def check_committed_without_outputs(path: Path, root: Path = ROOT) -> None:
    for i, cell in enumerate(_cells(path)):
        if cell["cell_type"] == "code":
            assert not cell.get("outputs") and cell.get("execution_count") is None, (
                f"{path.name} cell {i} has outputs; strip them before committing"
            )


def check_listed_in_the_table_of_contents(path: Path, root: Path = ROOT) -> None:
    assert f"{path.parent.name}/{path.stem}" in (root / "_toc.yml").read_text()


def check_sections_follow_the_anatomy(path: Path, root: Path = ROOT) -> None:
    headings = [
        line.lstrip("#").strip()
        for cell in _cells(path)
        if cell["cell_type"] == "markdown"
        for line in _source(cell).splitlines()
        if re.match(r"#{2,3} ", line)
    ]
    positions = []
    for section in ANATOMY:
        found = [i for i, h in enumerate(headings) if h.startswith(section)]
        assert found, f"{path.name}: no section '{section}' (headings: {headings})"
        positions.append(found[0])
    assert positions == sorted(positions), f"{path.name}: sections out of order: {headings}"


def check_every_historical_run_asserts_its_outcome(path: Path, root: Path = ROOT) -> None:
    for i, cell in enumerate(_cells(path)):
        src = _source(cell)
        if src.startswith("%%on_release"):
            first = src.splitlines()[0]
            assert "--raises" in first or "--ok" in first, (
                f"{path.name} cell {i}: %%on_release without --raises or --ok asserts nothing"
            )
        tags = cell.get("metadata", {}).get("tags", [])
        assert "raises-exception" not in tags, (
            f"{path.name} cell {i}: a raises-exception tag passes on any error; assert instead"
        )


def check_release_specs_are_in_the_manifest(path: Path, root: Path = ROOT) -> None:
    manifest = releases.load_manifest(releases.MANIFEST)
    text = "".join(_source(c) for c in _cells(path) if c["cell_type"] == "code")
    specs = set(re.findall(r"\b([a-z_]+==\d+\.\d+\.\d+)\b", text))
    # A case whose old releases do not import on today's jax runs them in era stacks only.
    eras = set(re.findall(r"\b(era:[a-z0-9]+-\d+)\b", text))
    assert specs or eras, f"{path.name} runs no historical release"
    assert specs <= set(manifest), f"{path.name}: not in the manifest: {specs - set(manifest)}"
    known = {f"era:{name}" for name in releases.eras.load_eras()}
    assert eras <= known, f"{path.name}: no such era: {eras - known}"


def check_exercise_solutions_are_hidden(path: Path, root: Path = ROOT) -> None:
    solutions, in_dropdown = [], False
    for c in exercise_cells(_cells(path)):
        if c["cell_type"] == "markdown":  # a gated solution: solution-start ... solution-end
            for name, body in re.findall(
                r"```\{(solution-start|solution-end)\}(.*?)```", _source(c), re.S
            ):
                in_dropdown = name == "solution-start" and ":class: dropdown" in body
        elif c["cell_type"] == "code":
            solutions.append(c)
            assert in_dropdown or "hide-cell" in c.get("metadata", {}).get("tags", []), (
                f"{path.name}: an exercise solution is not hidden (in a dropdown solution, or tag hide-cell)"
            )
    assert solutions, f"{path.name}: exercises without solutions"


#: A lesson's code cells: the median at most this many lines, and none longer than the max
#: (the set-up cell, generated and hidden, does not count).
MEDIAN_CELL_LINES, MAX_CELL_LINES = 8, 30
#: A string literal of code longer than this many lines belongs in a program module.
MAX_STRING_LINES = 5


def _code_cells(path: Path) -> list[tuple[int, str]]:
    return [
        (i, _source(c))
        for i, c in enumerate(_cells(path))
        if c["cell_type"] == "code"
        and "casebook-setup" not in c.get("metadata", {}).get("tags", [])
    ]


def check_cells_are_small(path: Path, root: Path = ROOT) -> None:
    sizes = {i: len(src.strip().splitlines()) for i, src in _code_cells(path)}
    long = {i: n for i, n in sizes.items() if n > MAX_CELL_LINES}
    assert not long, f"{path.name}: cells over {MAX_CELL_LINES} lines (index: lines): {long}"
    ordered = sorted(sizes.values())
    median = (ordered[(len(ordered) - 1) // 2] + ordered[len(ordered) // 2]) / 2
    assert median <= MEDIAN_CELL_LINES, (
        f"{path.name}: median code cell {median} lines, over {MEDIAN_CELL_LINES}"
    )


def check_no_code_in_strings(path: Path, root: Path = ROOT) -> None:
    for i, src in _code_cells(path):
        if src.startswith("%%"):
            continue  # a cell magic's body is code, highlighted and linted as such
        for match in re.finditer(r'("""|\'\'\')(.*?)\1', src, re.S):
            lines = match.group(2).strip().splitlines()
            assert len(lines) <= MAX_STRING_LINES, (
                f"{path.name} cell {i}: a {len(lines)}-line string literal; code that runs "
                "on a release belongs in a %%on_release cell or a casebook.programs module"
            )


TIMING = re.compile(r"interleave\(|compile_seconds\(|(run_program|program_table|run_variants)\(")
TIMING_PROGRAM = re.compile(r"_bench\b|_bench\"|_optimizer_only")


def is_timing_cell(source: str) -> bool:
    """A cell that times something: it interleaves variants, measures compile time, or
    runs a benchmark program (a module of casebook.programs named *_bench or
    *_optimizer_only)."""
    if re.search(r"interleave\(|compile_seconds\(", source):
        return True
    return bool(TIMING.search(source) and TIMING_PROGRAM.search(source))


def check_timing_cells_are_tagged(path: Path, root: Path = ROOT) -> None:
    for i, cell in enumerate(_cells(path)):
        if cell["cell_type"] == "code" and is_timing_cell(_source(cell)):
            assert "benchmark" in cell.get("metadata", {}).get("tags", []), (
                f"{path.name} cell {i} times something but is not tagged 'benchmark': in the "
                "test command it would share the CPU with other pages (casebook.maintainer.tools.suite)"
            )


FIRST_CALL = re.compile(r"perf_counter\(\)[\s\S]*?(\.compile\(\)|block_until_ready\(step\()")
"""A cell that times a compile in its kernel: the clock read around ``.compile()`` or a
step function's first call."""


def check_compile_times_are_measured_without_the_cache(path: Path, root: Path = ROOT) -> None:
    """A page that times compiles in its kernel turns jax's persistent compilation cache off
    before (the test command gives every process one; a compile timed with it on is a read
    from disk). ``bench.compile_seconds`` and the bench programs turn it off themselves."""
    cells = _code_cells(path)
    timed = [i for i, src in cells if FIRST_CALL.search(src)]
    off = [i for i, src in cells if "bench.no_compile_cache()" in src]
    assert not timed or (off and off[0] < timed[0]), (
        f"{path.name} cell {timed[0] if timed else '?'} times a compile in the kernel: call "
        "bench.no_compile_cache() in a cell before anything compiles"
    )


GLOSSARY = ROOT / "book" / "how-to-read.md"
TERM_USES = {
    "card": r"\bthe card\b",
    "story": r"\bthe story\b",
    "record": r"\bthe record\b",
    "era": r"\beras?\b(?!:)",
    "overlay": r"\boverlays?\b",
    "grid": r"\b(?:version )?grids?\b",
    "A/A control": r"\bA/A control\b",
    "status board": r"\bstatus board\b",
}
"""How a story uses each of the glossary's terms in running text (``the card``, ``eras``)."""
_NOT_PROSE = re.compile(
    r"```.*?```|:::\{[^}]*\}.*?$|\{(?!term\})\w+\}`[^`]*`|`[^`\n]*`|^\s*[#:(|].*?$|\[[^\]]*\]\([^)]*\)",
    re.S | re.M,
)
_TERM_ROLE = re.compile(r"\{term\}`(?:[^`<]*<)?([^`>]+)>?`")


def glossary_terms() -> list[str]:
    """The terms of How to read's glossary, as its ``{glossary}`` block lists them."""
    block = GLOSSARY.read_text().split(":::{glossary}\n", 1)[1].split("\n:::", 1)[0]
    return [line for line in block.splitlines() if line and not line.startswith(" ")]


def check_book_terms_are_linked_at_first_use(path: Path, root: Path = ROOT) -> None:
    """Issue 51: each glossary term the story uses (after the card, which sync writes) is
    a link to How to read's glossary (``{term}``) where the reader first meets it."""
    cells = [c for c in _cells(path) if c["cell_type"] == "markdown"][1:]
    text = "\n\n".join(_source(c) for c in cells)
    roles = {m[1].lower(): m.start() for m in reversed(list(_TERM_ROLE.finditer(text)))}
    prose = _NOT_PROSE.sub(
        lambda m: " " * len(m[0]), _TERM_ROLE.sub(lambda m: "~" * len(m[0]), text)
    )
    assert set(TERM_USES) == set(glossary_terms()), "TERM_USES and the glossary differ"
    unlinked = []
    for term, uses in TERM_USES.items():
        first = re.search(uses, prose, re.I)
        if first and roles.get(term.lower(), len(text)) > first.start():
            unlinked.append(
                f"{term!r} first used unlinked: ...{text[first.start() - 40 : first.end() + 20]}..."
            )
    assert not unlinked, "\n".join(unlinked)


#: Every check a case notebook must pass as a file, each ``check(path, root)``.
ANATOMY_CHECKS = (
    check_book_terms_are_linked_at_first_use,
    check_committed_without_outputs,
    check_listed_in_the_table_of_contents,
    check_sections_follow_the_anatomy,
    check_every_historical_run_asserts_its_outcome,
    check_release_specs_are_in_the_manifest,
    check_exercise_solutions_are_hidden,
    check_cells_are_small,
    check_no_code_in_strings,
    check_timing_cells_are_tagged,
    check_compile_times_are_measured_without_the_cache,
)


#: The checks that also hold for the executed chapters in book/.
CHAPTER_CHECKS = (
    check_committed_without_outputs,
    check_listed_in_the_table_of_contents,
    check_cells_are_small,
    check_no_code_in_strings,
)


@pytest.mark.parametrize(
    "check, path",
    [(c, p) for c in ANATOMY_CHECKS for p in NOTEBOOKS]
    + [(c, p) for c in CHAPTER_CHECKS for p in CHAPTERS],
    ids=lambda x: x.name if isinstance(x, Path) else x.__name__.removeprefix("check_"),
)
def test_anatomy(check, path):
    check(path)

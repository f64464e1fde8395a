"""The exercises are sphinx-exercise directives, and the teaching page points at real ones.

Each case notebook ends with ``## Exercises``: for exercise M of case N, a markdown cell with
an ``exercise`` directive labelled ``caseN-exM``, then a gated solution (``solution-start``
with ``:class: dropdown``, the solution's code cells, ``solution-end``), as QuantEcon lectures
do. The book's "Teach from this book" page (``book/teach.md``) links exercises by label, links
each case to Colab, and quotes the measured run times; these tests keep all three true.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_notebooks import exercise_cells

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))
TEACH = ROOT / "book" / "teach.md"

#: A fenced MyST directive: ```{name} argument (or ````{name}, whose body may hold a
#: ``` block), then its options and body, then the same fence.
DIRECTIVE = re.compile(r"^(`{3,})\{([\w-]+)\}[ \t]*([^\n]*)\n(.*?)^\1[ \t]*$", re.M | re.S)
BOLD_NUMBER = re.compile(r"^\*\*\d+\.\*\*", re.M)
LABEL = re.compile(r"case(\d+)-ex(\d+)")


def _source(cell: dict) -> str:
    src = cell["source"]
    return "".join(src) if isinstance(src, list) else src


def _options(body: str) -> dict[str, str]:
    """The ``:name: value`` lines at the top of a directive's body."""
    options = {}
    for line in body.splitlines():
        m = re.match(r":([\w-]+):\s*(.*)", line)
        if not m:
            break
        options[m.group(1)] = m.group(2).strip()
    return options


def exercise_tokens(path: Path) -> list[tuple[str, str, dict]]:
    """The Exercises section as a sequence of (kind, argument, options): one per directive
    in its markdown cells, in order, and ("code", "", {}) for each code cell."""
    tokens = []
    for cell in exercise_cells(json.loads(path.read_text())["cells"]):
        if cell["cell_type"] == "code":
            tokens.append(("code", "", {}))
        elif cell["cell_type"] == "markdown":
            for _, name, arg, body in DIRECTIVE.findall(_source(cell)):
                tokens.append((name, arg.strip(), _options(body)))
    return tokens


def check_exercises(path: Path) -> list[str]:
    """Assert the exercise/solution grammar of one notebook; return its exercise labels."""
    case = int(path.name[:2])
    tokens = exercise_tokens(path)
    labels, i = [], 0
    assert tokens, f"{path.name}: no exercise directive after '## Exercises'"
    while i < len(tokens):
        kind, _, options = tokens[i]
        assert kind == "exercise", f"{path.name}: expected an exercise directive, found {kind}"
        label = options.get("label", "")
        want = f"case{case}-ex{len(labels) + 1}"
        assert label == want, (
            f"{path.name}: exercise {len(labels) + 1} is labelled {label!r}, not {want!r}"
        )
        labels.append(label)
        kind, arg, options = tokens[i + 1] if i + 1 < len(tokens) else ("end of notebook", "", {})
        assert (kind, arg) == ("solution-start", label), (
            f"{path.name}: {label} is not followed by its solution-start (found {kind} {arg})"
        )
        assert options.get("class") == "dropdown", (
            f"{path.name}: the solution of {label} is not in a dropdown (:class: dropdown)"
        )
        j = i + 2
        while j < len(tokens) and tokens[j][0] == "code":
            j += 1
        assert j > i + 2, f"{path.name}: the solution of {label} has no code cell"
        assert j < len(tokens) and tokens[j][0] == "solution-end", (
            f"{path.name}: the solution of {label} has no solution-end"
        )
        i = j + 1
    return labels


def all_labels() -> list[str]:
    return [label for path in NOTEBOOKS for label in check_exercises(path)]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_exercises_are_labelled_directives_each_followed_by_a_dropdown_solution(path):
    check_exercises(path)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_exercise_is_left_as_a_bold_number(path):
    for i, cell in enumerate(json.loads(path.read_text())["cells"]):
        if cell["cell_type"] == "markdown":
            assert not BOLD_NUMBER.search(_source(cell)), (
                f"{path.name} cell {i}: a '**N.**' exercise; use an exercise directive"
            )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_solution_cells_are_not_also_hidden_by_tag(path):
    """The dropdown hides a solution; a hide-cell tag on top would hide it twice."""
    for cell in exercise_cells(json.loads(path.read_text())["cells"]):
        assert "hide-cell" not in cell.get("metadata", {}).get("tags", []), (
            f"{path.name}: a solution cell tagged hide-cell inside a dropdown"
        )


def test_exercise_labels_are_unique_across_the_book():
    labels = all_labels()
    assert len(labels) == len(set(labels)), labels


def test_every_exercise_the_teaching_page_names_exists():
    text = TEACH.read_text()
    refs = re.findall(r"\{(?:ref|numref|prf:ref)\}`(?:[^`<]*<)?([\w-]+)>?`", text)
    named = {m.group(0) for m in LABEL.finditer(text)}
    assert any(LABEL.fullmatch(r) for r in refs), (
        "book/teach.md should link exercises: {ref}`caseN-exM`"
    )
    missing = named - set(all_labels())
    assert not missing, f"book/teach.md names exercises that do not exist: {sorted(missing)}"


def test_the_teaching_page_is_in_the_table_of_contents():
    assert "file: book/teach" in (ROOT / "_toc.yml").read_text()


def test_the_teaching_page_links_every_case_and_the_lessons_to_colab():
    config = (ROOT / "_config.yml").read_text()
    url = re.search(r"^repository:\s*\n\s+url:\s*(\S+)", config, re.M).group(1)
    branch = re.search(r"^repository:\s*\n(?:\s+.*\n)*?\s+branch:\s*(\S+)", config, re.M).group(1)
    repo = url.removeprefix("https://github.com/").rstrip("/")
    text = TEACH.read_text()
    links = re.findall(r"https://colab\.research\.google\.com/github/([^\s)>]+)", text)
    assert links, "book/teach.md has no Colab link"
    for link in links:
        prefix = f"{repo}/blob/{branch}/"
        assert link.startswith(prefix), f"Colab link {link} is not built from {repo} at {branch}"
        assert (ROOT / link.removeprefix(prefix)).is_file(), f"Colab link to a missing file: {link}"
    linked = {link.split(f"/blob/{branch}/")[-1] for link in links}
    # each page opens as its plain twin (handouts/pages/), never its MyST notebook
    wanted = {f"handouts/pages/{p.name}" for p in NOTEBOOKS} | {"handouts/pages/lessons.ipynb"}
    assert not linked & {str(p.relative_to(ROOT)) for p in NOTEBOOKS}, "a Colab link opens MyST"
    handouts = {str(p.relative_to(ROOT)) for p in (ROOT / "handouts" / "student").glob("*.ipynb")}
    assert len(handouts) >= 2, "no student edition committed under handouts/student/"
    assert wanted | handouts <= linked, f"no Colab link for {(wanted | handouts) - linked}"


def test_the_teaching_page_quotes_run_times_only_in_its_generated_plan():
    """The plan's minutes are computed from book/measurements/workshop/ (and checked by
    tests/test_workshop.py); outside it the page links the status board's table of
    whole-page runs instead of copying figures that would go stale."""
    text = TEACH.read_text()
    start, end = text.index("<!-- plan: start"), text.index("<!-- plan: end -->")
    outside = text[:start] + text[end:]
    assert not [line for line in outside.splitlines() if re.search(r"\d s \|", line)]
    assert "{ref}`status-runs`" in text
    status = (ROOT / "book" / "status.ipynb").read_text()
    assert "(status-runs)=" in status and "runs.table()" in status

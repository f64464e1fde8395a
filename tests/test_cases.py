"""casebook.cases: the registry is the one home of each case, and every other place agrees.

The README and introduction tables are the rendered registry; ``_toc.yml`` lists every case
notebook in registry order; each notebook's card has the registry's issue link, opened date
and first fixed release, and cites a key of ``book/references.bib``; each expected error is
the one the notebook asserts; each check set-up gets the verdict the lessons page shows.
The ``check_*(case, root)`` functions also run on a case scaffolded into a temporary copy.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from test_notebooks import ANATOMY_CHECKS

from casebook import cases, releases
from casebook.cases import Case, _scaffold as scaffold, _tables as tables
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


def _code(case: Case, root: Path) -> str:
    cells = json.loads((root / case.notebook).read_text())["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")


def check_tables(all_cases: tuple[Case, ...], root: Path) -> None:
    for file in tables.FILES:
        table = tables.current((root / file).read_text())
        assert table == tables.render(file, all_cases), (
            f"{file}: the case table is not the registry's; run casebook.cases._tables.sync"
        )
        for case in all_cases:
            assert case.issue.url in table and case.docname in table and case.summary in table


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


def check_errors(case: Case, root: Path) -> None:
    code = _code(case, root)
    for error in case.errors:
        assert error.exc_type in code and error.match in code, (
            f"{case.notebook} does not assert {error.exc_type} matching {error.match!r}"
        )
        if error.release != "current":
            assert error.release in code


def check_case(case: Case, all_cases: tuple[Case, ...], root: Path) -> None:
    """Everything a case must satisfy against a checkout at ``root``."""
    check_card(case, root)
    check_errors(case, root)
    assert case.docname.startswith(f"notebooks/{case.number:02d}-{case.key}-")
    assert all(t.case == case.docname for t in case.triggers)
    assert [c.number for c in all_cases] == list(range(1, len(all_cases) + 1))


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


CURRENT = [
    (c.key, s.name) for c in cases.CASES for s in c.checks if s.release == "current" and not s.x64
]


@pytest.mark.parametrize("key, name", CURRENT, ids=[f"{k}:{n}" for k, n in CURRENT])
def test_check_setups_get_their_verdict(key, name):
    from casebook.check import check_optimizer

    setup = cases.get(key).check(name)
    report = check_optimizer(**setup.build())
    assert report.ok != setup.buggy, str(report)


ELSEWHERE = [
    (c.key, s.name) for c in cases.CASES for s in c.checks if s.release != "current" or s.x64
]


@pytest.mark.parametrize("key, name", ELSEWHERE, ids=[f"{k}:{n}" for k, n in ELSEWHERE])
def test_check_setups_on_old_releases_and_x64_get_their_verdict(key, name):
    """These run in a subprocess: on the old release where the bug lives, or in 64-bit mode."""
    setup = cases.get(key).check(name)
    code = (
        f"from casebook.cases import get\nfrom casebook.check import check_optimizer\n"
        f"result = check_optimizer(**get({key!r}).check({name!r}).build()).ok\n"
    )
    outcome = releases.run(
        code, setup.release if setup.release != "current" else releases.CURRENT, x64=setup.x64
    )
    assert outcome.ok, outcome.summary
    assert outcome.result != setup.buggy


def test_a_scaffolded_case_passes_the_anatomy_and_registry_tests(tmp_path):
    for part in ("notebooks", "casebook/cases"):
        shutil.copytree(ROOT / part, tmp_path / part, ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "book").mkdir()
    for file in ("_toc.yml", "_config.yml", "README.md", "book/intro.md", "book/references.bib"):
        shutil.copy(ROOT / file, tmp_path / file)
    args = [
        "optax-9999",
        "--issue",
        "https://github.com/google-deepmind/optax/issues/9999",
        "--title",
        'A "new" bug',
        "--opened",
        "2026-01-02",
        "--root",
        str(tmp_path),
    ]
    assert scaffold.main(args) == 0
    assert scaffold.main(args) == 2  # the module exists already

    new = cases.load(tmp_path / "casebook" / "cases")
    assert [c.key for c in new] == IDS + ["optax-9999"]
    case = new[-1]
    assert case.number == 6 and case.issue.label == "optax#9999"
    for check in ANATOMY_CHECKS:
        check(tmp_path / case.notebook, tmp_path)
    check_case(case, new, tmp_path)
    check_tables(new, tmp_path)
    check_toc(new, tmp_path)
    from casebook.tools import colab

    assert colab.is_in_sync(tmp_path / case.notebook, tmp_path / "_config.yml")
    # One folder, the notebook, the toc and a bib entry: what a sixth case touches (the
    # tables are generated).
    changed = {
        p.relative_to(tmp_path).as_posix()
        for p in tmp_path.rglob("*")
        if p.is_file()
        and "__pycache__" not in p.parts
        and (
            not (ROOT / p.relative_to(tmp_path)).exists()
            or p.read_bytes() != (ROOT / p.relative_to(tmp_path)).read_bytes()
        )
    }
    assert changed == {
        "casebook/cases/optax_9999/case.toml",
        "casebook/cases/optax_9999/__init__.py",
        case.notebook,
        "_toc.yml",
        "book/references.bib",
        "README.md",
        "book/intro.md",
    }


def test_an_expected_error_counts_only_where_the_registry_says_it_was_asserted():
    """``Case.unasserted``: asserting the wording on another release does not count."""
    from casebook.releases import Asserted

    case = cases.get("optax-828")
    on_release = next(e for e in case.errors if e.release == "optax==0.1.9")
    pattern = f"prefix {on_release.match} suffix"
    elsewhere = [Asserted("optax==0.2.0", on_release.exc_type, pattern)]
    assert on_release in case.unasserted(elsewhere)
    wrong_type = [Asserted("optax==0.1.9", "ValueError", pattern)]
    assert on_release in case.unasserted(wrong_type)
    there = [Asserted("optax==0.1.9", on_release.exc_type, pattern)]
    assert on_release not in case.unasserted(there)


def test_expect_records_what_it_asserted_and_where():
    from casebook import releases

    before = len(releases.asserted())
    releases.expect(releases.run("int('x')"), raises=ValueError, match="invalid literal")
    assert releases.asserted()[before:] == [
        releases.Asserted("current", "ValueError", "invalid literal")
    ]

"""``python3 -m casebook sync``: what a reader sees is written from one source, and checked there.

Every generated file (each page's card, repro and fix cells, exercise answers, set-up cell
and MyST twin; the README and intro tables; the Errors, API and workshop-plan pages) is what
``sync`` writes from the case folders: :func:`test_nothing_generated_is_stale` fails, naming
the command, while one is not. Each single source, broken on purpose in a copy of the
checkout, shows where the reader sees it; and a new case walks the path CONTRIBUTING.md
documents, from ``new`` to the Errors page, ``explain``, the board and the workshop plan.
"""

from __future__ import annotations

import re
import shutil
import tomllib
from pathlib import Path

import pytest
from test_cases import _copy, _edit, _markdown

from casebook import cases, explain
from casebook.maintainer import sync
from casebook.maintainer.sync import _card
from casebook.releases import Asserted

ROOT = Path(__file__).resolve().parent.parent


def test_nothing_generated_is_stale():
    late = [p.relative_to(ROOT).as_posix() for p in sync.stale()]
    assert not late, f"generated files are stale: {late}; run `{sync.COMMAND}`"


@pytest.mark.parametrize("case", cases.CASES, ids=lambda c: c.key)
def test_every_script_of_a_case_is_read_and_every_script_it_names_exists(case):
    facts = tomllib.loads((case.folder / "case.toml").read_text())
    page = (ROOT / case.notebook).read_text()
    named = {"wrong", "reporter"} | ({"fix"} if "upgrade" not in facts["card"] else set())
    named |= {"reporter_fix"} if '"reporter-fix"' in page else set()
    for entry in facts.get("message", []) + facts.get("trigger", []):
        script = entry["script"]
        named.update([script] if isinstance(script, str) else script)
    have = {p.stem for p in (case.folder / "scripts").glob("*.py")}
    assert have == named, f"unread: {sorted(have - named)}; missing: {sorted(named - have)}"


# ------------------------------------------------- each single source, broken on purpose


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    """One copy of what sync reads and writes, shown in sync once for the module."""
    root = _copy(tmp_path_factory.mktemp("pristine"))
    assert not sync.stale(root)  # the copy starts in sync
    return root


@pytest.fixture
def copy(pristine, tmp_path) -> Path:
    """A copy of :func:`pristine` for one test to break."""
    return Path(shutil.copytree(pristine, tmp_path / "checkout"))


def test_a_word_changed_in_a_card_line_after_the_first_shows_on_the_page(copy):
    facts = copy / "casebook" / "cases" / "optax_828" / "case.toml"
    _edit(
        facts, "but the corresponding output of false_fun", "but the matching output of false_fun"
    )
    page = copy / "notebooks" / "01-optax-828-zero-nans-multisteps.ipynb"
    assert set(sync.stale(copy)) >= {page, page.with_suffix(".md")}
    sync.sync(copy)
    assert "but the matching output of false_fun" in _markdown(page)
    # ... and the card's check, which reads the same field, no longer holds.
    case = cases.load(copy / "casebook" / "cases")[0]
    printed = cases.get("optax-828").card["today"].replace("\n…\n", "\n(lines left out)\n")
    exc_type, message = printed.split(": ", 1)
    assert cases.get("optax-828").today_shown(exc_type, message)
    assert not case.today_shown(exc_type, message)


def test_a_fact_changed_in_the_case_s_toml_shows_in_its_facts_table(copy):
    """The facts table is written from ``[facts]`` (issue 50: no copy a contributor keeps
    in step): one edit of the source, and sync rewrites the page's row."""
    facts = copy / "casebook" / "cases" / "optax_828" / "case.toml"
    case = cases.get("optax-828")
    first = case.facts["lesson"].split()[0]
    _edit(facts, f"lesson = '''{first}", f"lesson = '''Rewritten: {first}")
    page = copy / "notebooks" / "01-optax-828-zero-nans-multisteps.ipynb"
    assert page in sync.stale(copy)
    sync.sync(copy)
    assert f"| **Lesson** | Rewritten: {first}" in _markdown(page)


def test_a_changed_answer_shows_in_its_exercise(copy):
    facts = copy / "casebook" / "cases" / "optax_828" / "case.toml"
    _edit(facts, "x64 on, found_nan: int64", "x64 on, found_nan: int32")
    page = copy / "notebooks" / "01-optax-828-zero-nans-multisteps.ipynb"
    assert page in sync.stale(copy)
    sync.sync(copy)
    shown = dict(_card.answers_in(_markdown(page)))
    case = cases.load(copy / "casebook" / "cases")[0]
    assert case.answer("case1-ex2") != cases.get("optax-828").answer("case1-ex2")
    assert "x64 on, found_nan: int32" in shown["case1-ex2"]


def test_a_wording_dropped_from_the_registry_leaves_its_page_unlisted(copy):
    facts = copy / "casebook" / "cases" / "optax_828" / "case.toml"
    text = facts.read_text()
    drop = re.search(
        r"\n\[\[message\]\]\ntext = 'sub does not accept dtype bool.*?\n(?=\n)", text, re.S
    )
    facts.write_text(text.replace(drop.group(0), ""))
    assert copy / "book" / "errors.md" in sync.stale(copy)
    printed = "sub does not accept dtype bool at position 0. Accepted dtypes at position 0 are "
    seen = [
        Asserted(
            "current",
            "TypeError",
            "bool",
            printed + "subtypes of integer, complexfloating, floating.",
        )
    ]
    assert not cases.unlisted(seen)  # the registry lists it ...
    assert cases.unlisted(seen, cases.load(copy / "casebook" / "cases")) == seen  # ... not now


def test_a_family_renamed_in_its_toml_is_renamed_wherever_it_is_named(copy, monkeypatch):
    """``families.toml`` is the one home of a family's name: renamed there, after ``sync`` the
    lessons page (its table and heading), the Errors page, the intro, the README, the workshop
    plan and the lessons' handouts say the new name and never the old; the check's report and
    ``explain``, which read the toml when they run, say it too."""
    from casebook.cases import optax_1373
    from casebook.check import _report, check_optimizer
    from casebook.explain import _rank

    toml = copy / "casebook" / "check" / "families.toml"
    old, new = "A callable that is data", "A callable mistaken for a schedule"
    _edit(toml, f'title = "{old}"', f'title = "{new}"')
    pages = ["book/lessons.ipynb", "book/lessons.md", "book/errors.md", "book/intro.md"]
    pages += ["README.md", "book/teach.md", "handouts/pages/lessons.ipynb"]
    assert {copy / p for p in pages} <= set(sync.stale(copy))
    sync.sync(copy)
    for page in pages:
        text = (copy / page).read_text()
        assert new in text or new.lower() in text, page
        assert old not in text and old.lower() not in text, page
    monkeypatch.setattr(_report, "FAMILIES_FILE", toml)
    monkeypatch.setattr(_rank, "FAMILIES", cases.read_families(toml))
    _report._families.cache_clear()
    try:
        report = str(check_optimizer(**optax_1373.module_mask()))
    finally:
        _report._families.cache_clear()
    assert f"family 3, {new.lower()}: " in report and old.lower() not in report
    variant = ROOT / "tests" / "explain_variants" / "callable" / "inject-lion-mask-module.txt"
    answer = explain.explain(variant.read_text())
    assert f"the family: family 3, {new.lower()}: " in answer and old.lower() not in answer


def test_the_book_s_own_exceptions_are_not_wordings():
    seen = [Asserted("current", "OptimizerCheckError", None, "num_linesearch_steps: step 1")]
    assert not cases.unlisted(seen)


def test_a_twin_edited_after_its_notebook_is_never_overwritten(copy, capsys):
    page = copy / "notebooks" / "01-optax-828-zero-nans-multisteps.ipynb"
    twin = page.with_suffix(".md")
    _edit(twin, "The trigger needs no NaN", "The trigger needs no NaNs")
    assert twin in sync.stale(copy)
    assert twin not in sync.sync(copy) and page not in sync.sync(copy)
    assert "The trigger needs no NaNs" in twin.read_text()
    assert "jupytext --to ipynb --update" in capsys.readouterr().out

"""The reader layer: each case page answers in its first screen, tells a short story, and
keeps the proof in the record; the answer's fix, as the built page shows it, is the program
the executed page runs; the Errors page's messages are found by the book's search.

The HTML checks build the case pages and the Errors page with Sphinx and MyST-NB (outputs
not executed: the card's code and the page text are the source's), once per test session.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from casebook import cases, explain as _explain
from casebook.maintainer.sync import _card, errorspage
from casebook.project import ROOT

CASES = cases.CASES
HIDDEN = {"remove-input", "remove-cell", "hide-input", "hide-cell"}
STORY_WORDS = 2000
VISIBLE_NAMES = 3  # the book's own names a page's visible code uses (issue: at most 3)


def _cells(case) -> list[dict]:
    return json.loads((ROOT / case.notebook).read_text())["cells"]


def _source(cell: dict) -> str:
    return "".join(cell["source"])


def _tags(cell: dict) -> set[str]:
    return set(cell.get("metadata", {}).get("tags", []))


def _first_markdown(case) -> str:
    return next(_source(c) for c in _cells(case) if c["cell_type"] == "markdown")


def story_words(case) -> int:
    """Words of the markdown cells from the top to the ``## Exercises`` heading (or
    ``## The record``, whichever comes first; code blocks inside them not counted): the
    exercises are the workshop's, the record the proof's, neither the story's."""
    words = 0
    for cell in _cells(case):
        if cell["cell_type"] != "markdown":
            continue
        head, *rest = re.split(
            r"^## (?:Exercises|The record)\b", _source(cell), maxsplit=1, flags=re.M
        )
        words += len(re.sub(r"```.*?```", "", head, flags=re.S).split())
        if rest:
            break
    return words


def _python(source: str) -> str:
    return "\n".join("" if re.match(r"\s*[%!]", x) else x for x in source.splitlines())


def visible_names(case) -> set[str]:
    """The casebook functions, classes and constants a reader sees used: names bound by a
    casebook import anywhere on the page (a hidden cell too), used in a visible cell."""
    import ast

    code_cells = [c for c in _cells(case) if c["cell_type"] == "code"]
    bound: dict[str, str] = {}
    for cell in code_cells:
        for node in ast.walk(ast.parse(_python(_source(cell)))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("casebook"):
                for alias in node.names:
                    bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    used: set[str] = set()
    for cell in code_cells:
        if _tags(cell) & (HIDDEN | {"casebook-setup"}):
            continue
        for node in ast.walk(ast.parse(_python(_source(cell)))):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                if node.value.id in bound:
                    used.add(f"{bound[node.value.id]}.{node.attr}")
            elif isinstance(node, ast.Name) and node.id in bound:
                used.add(bound[node.id])
    return {n for n in used if not _is_module(n)}


def _is_module(name: str) -> bool:
    import importlib

    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.key)
def test_the_card_answers_in_the_first_screen(case):
    card = _first_markdown(case)
    heading = "If you got here from this error" if case.raises else "If your program shows this"
    assert "{admonition} " + heading in card
    assert case.card["today"] in card and case.why in card and case.still_open in card
    wrong = card.index("**You probably wrote**\n\n```python\n" + case.wrong + "\n```")
    language, do = case.do_this
    assert wrong < card.index("**Do this**") < card.index(f"```{language}\n{do}\n```")


CARD_LINES, CARD_COLUMNS, CARD_WORDS, TODAY_LINES = 10, 74, 60, 6
"""The card's limits: "You probably wrote" and "Do this" at most 10 lines of at most 74
characters each (what the card's column holds at 1280 px without wrapping), "Why" and
"Still open" at most 60 words each, today's message at most 6 lines (the browser test
measures the rest on the rendered page)."""


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.key)
def test_the_card_keeps_to_its_limits(case):
    """The card's code on its first screen: "You probably wrote", and "Do this" as shown
    there (what differs from the wrong code, the rest folded into one line)."""
    shown = "\n".join(_card.shown_fix(case.wrong, *case.do_this))
    for name, code in (("wrong.py", case.wrong), ("Do this", shown)):
        lines = code.splitlines()
        assert len(lines) <= CARD_LINES, f"{case.key}: {name} has {len(lines)} lines"
        assert max(map(len, lines)) <= CARD_COLUMNS, f"{case.key}: a line of {name} wraps"
        assert not any(x.lstrip().startswith(("%", "!")) for x in lines), f"{name}: a magic"
        assert "casebook" not in code, f"{case.key}: {name} imports casebook"
    for name in ("why", "still_open"):
        words = len(getattr(case, name).split())
        assert words <= CARD_WORDS, f"{case.key}: {name} has {words} words"
    assert "](#" in case.still_open, f"{case.key}: Still open links no proof"
    assert len(case.card["today"].splitlines()) <= TODAY_LINES
    assert case.issue.label in case.card["title"] and "Error:" not in case.card["title"]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.key)
def test_the_card_s_code_is_run_by_the_hidden_cell_after_the_set_up(case):
    """What the card shows is what runs: the cell after the set-up cell runs the card's two
    scripts (``sync`` writes both from the case folder)."""
    code = [c for c in _cells(case) if c["cell_type"] == "code"]
    check = code[1]
    assert _tags(check) >= {"card-check", "remove-cell"}
    source = _source(check)
    assert "releases.run(card.wrong" in source and "releases.run(card.fix_program)" in source
    shown = "card.today_shown(" if case.raises else "card.today_printed(wrong.stdout)"
    assert shown in source and 'card.card["fix_prints"]' in source


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.key)
def test_the_story_is_short_and_shows_few_casebook_names(case):
    assert story_words(case) <= STORY_WORDS, f"{case.key}: {story_words(case)} words"
    names = visible_names(case)
    assert len(names) <= VISIBLE_NAMES, f"{case.key} shows {len(names)}: {sorted(names)}"


# ------------------------------------------------------------------------- built HTML


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The case pages and the Errors page, built to HTML (not executed)."""
    src = tmp_path_factory.mktemp("site")
    (src / "book").mkdir()
    shutil.copy(errorspage.PAGE, src / "book" / "errors.md")
    shutil.copy(ROOT / "book" / "references.bib", src / "book" / "references.bib")
    shutil.copytree(ROOT / "notebooks", src / "notebooks", ignore=shutil.ignore_patterns("*.md"))
    (src / "conf.py").write_text(
        "extensions = ['myst_nb', 'sphinx_design', 'sphinx_exercise', 'sphinxcontrib.bibtex']\n"
        "root_doc = 'book/errors'\n"
        "nb_execution_mode = 'off'\n"
        "bibtex_bibfiles = ['book/references.bib']\n"
        "myst_enable_extensions = ['colon_fence', 'dollarmath', 'substitution']\n"
        "suppress_warnings = ['mystnb.unknown_mime_type']\n"
    )
    out = src / "_html"
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-q", str(src), str(out)],
        capture_output=True,
        text=True,
    )
    assert (out / "searchindex.js").exists(), proc.stderr[-3000:]
    return out


def _code_blocks(page: Path) -> list[str]:
    raw = page.read_text()
    blocks = re.findall(r'<div class="highlight"><pre>(.*?)</pre>', raw, flags=re.S)
    return [html.unescape(re.sub(r"<[^>]+>", "", b)) for b in blocks]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.key)
def test_the_card_s_fix_on_the_built_page_is_the_program_its_page_runs(site, case):
    """The "Do this" program a reader copies out of the built page (the whole program, one
    click away under the card's folded block) is, character for character, the program the
    page's card-check cell runs on today's stack and checks
    the printed lines of (``releases.run(card.fix_program)``, asserted above to be there):
    so the executed page proves the copied fix, and it runs once, not twice. Where the
    fix is an upgrade, the page shows the upgrade, and the code it says you wrote is what
    then runs."""
    page = site / (case.docname + ".html")
    language, do = case.do_this
    blocks = [b.strip() for b in _code_blocks(page)]
    assert do.strip() in blocks, f"{page.name} does not show the fix as code"
    runs = case.wrong if language == "bash" else do
    assert case.fix_program == runs and runs.strip() in blocks, f"{page.name}: {runs!r}"


def _search_terms(site: Path) -> tuple[dict, list[str]]:
    """The index Sphinx's search reads: ``{stem: docs}`` of body and title words (a word
    of a heading is kept under ``titleterms`` only), and the documents' names."""
    text = (site / "searchindex.js").read_text()
    index = json.loads(text[text.index("(") + 1 : text.rindex(")")])
    terms: dict[str, list[int]] = {}
    for table in (index["terms"], index["titleterms"]):
        for stem, docs in table.items():
            terms.setdefault(stem, []).extend([docs] if isinstance(docs, int) else docs)
    return terms, index["docnames"]


@pytest.mark.parametrize(
    "cm", [(c, m) for c in CASES for m in c.messages], ids=lambda cm: cm[1].text[:30]
)
def test_each_message_is_found_by_the_book_s_search(site, cm):
    """A fragment of the message (its words, stemmed as Sphinx's English search does)
    leads to the Errors page."""
    from sphinx.search.en import SearchEnglish

    _, message = cm
    terms, docnames = _search_terms(site)
    errors = docnames.index("book/errors")
    stemmer = SearchEnglish({})
    words = [
        w
        for w in stemmer.split(message.text.splitlines()[0])  # as the search splits a query
        if len(w) >= 3 and w.lower() not in stemmer.stopwords  # stop words are dropped
    ]
    assert words, message.text
    for word in words[:8]:
        stem = stemmer.stem(word.lower())
        docs = terms.get(stem, [])
        assert errors in docs, f"{word!r} ({stem}) of {message.text[:60]!r} is not indexed"


def test_explain_answers_for_every_message_on_the_page():
    page = errorspage.PAGE.read_text()
    for case in CASES:
        for message in case.messages:
            assert message.text in page
            if message.distinctive:
                found = _explain.find(f"{message.exc_type}: {message.text}")
                assert case in [c for c, _ in found]

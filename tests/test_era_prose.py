"""An era's versions are written once, in its lock (``casebook/cases/KEY/era.txt``), and the
prose takes them from there: ``{{ era_optax_828.jax }}``, a MyST substitution that the book's
extension ``casebook_eras`` fills from every lock when Sphinx reads its configuration, that
the plain twins' render fills from the same table, and that text read outside Sphinx (a
page's meta description) fills with ``cases.with_eras``.

The first test edits one lock (a copy, named by ``CASEBOOK_MANIFEST`` as the tests describe
a synthetic era) and shows that every rendering follows: the table, the meta description,
the HTML page, the translated page (its catalog's ``msgstr`` keeps the reference) and the
plain twin. The second reads the pages: no sentence that names the reporter's stack writes,
by hand, a version equal to its era's pin for that package.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

from casebook import cases
from casebook.maintainer.tools import i18n
from casebook.releases import eras

ROOT = Path(__file__).resolve().parent.parent


def _extension(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "book" / "_ext" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


META = _extension("casebook_meta")  # its previews are computed at import, from the real eras

BUMPED = "0.4.99"
"""The jax of the copied lock of ``optax-828`` (its real lock pins 0.4.25)."""


@pytest.fixture
def bumped(tmp_path, monkeypatch) -> dict[str, eras.Era]:
    """The era ``optax-828`` with its lock copied and its jax line changed, as the only era
    (``CASEBOOK_MANIFEST``, how the tests describe a synthetic era)."""
    real = eras.load_eras()["optax-828"]
    lock = real.lock.read_text()
    assert f"\njax=={real.packages['jax']} " in lock
    (tmp_path / "era.txt").write_text(
        lock.replace(f"\njax=={real.packages['jax']} ", f"\njax=={BUMPED} ")
    )
    (tmp_path / "eras.toml").write_text(
        '[era."optax-828"]\n'
        f'reported = "{real.reported}"\nissue = "{real.issue}"\n'
        f'python = "{real.python}"\nlock = "era.txt"\n'
    )
    monkeypatch.setenv("CASEBOOK_MANIFEST", str(tmp_path / "eras.toml"))
    return eras.load_eras()


def _sphinx(src: Path, out: Path, language: str = "en") -> str:
    """Build ``src`` (one MyST page, ``index.md``) to HTML with the book's extension; the
    page's text."""
    from sphinx.application import Sphinx

    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    try:
        app = Sphinx(
            str(src),
            str(src),
            str(out),
            str(out / ".doctrees"),
            "html",
            confoverrides={"language": language},
            status=None,
            warning=None,
            freshenv=True,
        )
        app.build()
    finally:
        sys.path.remove(str(ROOT / "book" / "_ext"))
    return (out / "index.html").read_text()


def test_a_changed_lock_changes_every_rendering_of_its_reference(bumped, tmp_path, monkeypatch):
    assert bumped["optax-828"].packages["jax"] == BUMPED
    assert cases.era_substitutions()["era_optax_828"]["jax"] == BUMPED
    said = "The reporter's stack: jax {{ era_optax_828.jax }}."
    assert cases.with_eras(said) == f"The reporter's stack: jax {BUMPED}."

    # the meta description, written outside Sphinx from the card's text
    case = cases.get("optax-828")
    card = dataclasses.replace(case, card={**case.card, "lead": said})
    assert f"jax {BUMPED}." in META._card_sentence(card)

    # the HTML page, and the zh page, whose catalog keeps the same reference
    src = tmp_path / "src"
    (src / "locale" / "zh_CN" / "LC_MESSAGES").mkdir(parents=True)
    (src / "conf.py").write_text(
        'extensions = ["myst_parser", "casebook_eras"]\n'
        'myst_enable_extensions = ["substitution"]\n'
        # explicit: a myst-nb build earlier in this process leaves ".md" mapped to its parser
        'source_suffix = {".md": "markdown"}\n'
        'locale_dirs = ["locale"]\n'
    )
    (src / "index.md").write_text(f"# Era\n\n{said}\n")
    (src / "locale" / "zh_CN" / "LC_MESSAGES" / "index.po").write_text(
        'msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n\n'
        f'msgid "{said}"\nmsgstr "报告者的环境：jax {{{{ era_optax_828.jax }}}}。"\n'
    )
    assert f"jax {BUMPED}." in _sphinx(src, tmp_path / "en")
    assert f"jax {BUMPED}。" in _sphinx(src, tmp_path / "zh", "zh_CN")

    # the plain twin (what Colab shows): the plain render passes the same table
    from casebook.maintainer.workshop import _plain

    passed: dict = {}
    monkeypatch.setattr(
        "jupyter_book.sphinx.build_sphinx",
        lambda *a, confoverrides, **k: passed.update(confoverrides) or 0,
    )
    book = tmp_path / "book"
    book.mkdir()
    (book / "_config.yml").write_text("sphinx:\n  local_extensions: {}\n")
    _plain._sphinx(book, tmp_path / "plain")
    assert passed["myst_substitutions"]["era_optax_828"]["jax"] == BUMPED


ERA_PHRASE = re.compile(
    r"reporter's|report's|that day|day of the report|the pull request was opened|"
    r"era:[a-z]+-\d+|\{term\}`era`",
)
"""What names the reporter's stack in a sentence."""

PINNED = re.compile(
    r"\b(jax|jaxlib|optax|equinox|diffrax|optimistix|lineax|chex|numpy)"
    r"(?:\s+and\s+jaxlib)?\s+(\d+\.\d+\.\d+)\b"
)
"""A package and its version, as the prose writes them (``jax and jaxlib 0.4.25``)."""

UPSTREAM = {
    # A version that is a fact about a release, not the era's pin, in a sentence that names
    # the era: {case: {words of the sentence: why it stays written}}.
    "optax-828": {
        "jax 0.4.25 to 0.4.35: `": "the jax releases that print a wording (older wordings)",
    },
    "optax-1210": {
        "on today's jax with optax 0.2.4": "an overlay: optax 0.2.4 on today's jax",
        "In the reporter's jax 0.5.1, the fresh": "a link to that release's source beside it",
        "lines 477-500 in equinox 0.11.12": "a link to that release's source",
    },
    "diffrax-521": {
        "with optax 0.2.3, it did not": "the exercise runs the overlay optax==0.2.3",
    },
    "optax-969": {
        "optax 0.2.2 on jax 0.4.30 or older": "the affected releases",
    },
    "equinox-854": {
        "equinox 0.11.6 with jax 0.4.32": "the affected releases (the card's lead)",
        "equinox 0.11.6 on jax 0.4.33 (`": "the affected releases (the facts table)",
        "equinox 0.11.6\ncompares": "what equinox 0.11.6's code does",
    },
    "optimistix-129": {
        "jax 0.6.0 (": "the bug is jax 0.6.0's (the title names it; 0.6.1 fixed it)",
        "jax 0.6.0's helper": "what jax 0.6.0's code does",
        "on jax 0.6.0.**": "a fix for users of jax 0.6.0, the bug's release",
    },
}
"""Hand-written versions in a sentence that names the era, each kept as an upstream fact."""


def _prose(text: str) -> str:
    """Markdown without its code: fenced blocks and inline code spans are emptied."""
    text = re.sub(r"^(```|~~~).*?^\1", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "``", text)


def _paragraphs(page: str) -> list[str]:
    path = ROOT / f"{page}.ipynb"
    if path.exists():
        cells = json.loads(path.read_text())["cells"]
        texts = ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
    else:
        texts = [(ROOT / f"{page}.md").read_text()]
    return [p for t in texts for p in re.split(r"\n\s*\n", t)]


def _sentences(paragraph: str) -> list[str]:
    """A paragraph's sentences (a table row's cells apart), as written (code included)."""
    return [s for s in re.split(r"(?<=[.!?])\s+(?=\S)|\s+\|\s+", paragraph) if s.strip()]


def handwritten(page: str, paragraphs: list[str], pins: dict[str, set[str]], kept=()) -> list[str]:
    """The versions written by hand in ``paragraphs``' sentences that name the era, each
    equal to a pin of ``pins`` for its package, but in the sentences holding words of
    ``kept`` (the page's :data:`UPSTREAM`)."""
    found = []
    for sentence in (s for p in paragraphs for s in _sentences(p)):
        prose = _prose(sentence)
        if not ERA_PHRASE.search(prose):
            continue
        if any(words in sentence for words in kept):
            continue
        found += [
            f"{page}: {m.group()!r} in {sentence!r}"
            for m in PINNED.finditer(prose)
            if m.group(2) in pins.get(m.group(1), set())
        ]
    return found


def test_no_page_writes_its_era_s_versions_by_hand():
    """Each case page (its card included, which sync writes from case.toml) against its own
    era; the door pages against every era."""
    every = eras.load_eras()
    pins = {name: {p: {v} for p, v in era.packages.items()} for name, era in every.items()}
    anywhere: dict[str, set[str]] = {}
    for era in every.values():
        for p, v in era.packages.items():
            anywhere.setdefault(p, set()).add(v)
    found = []
    for case in cases.CASES:
        kept = UPSTREAM.get(case.key, {})
        found += handwritten(case.docname, _paragraphs(case.docname), pins[case.key], kept)
    for page in i18n.DOORS:
        if page != "book/errors":  # written by sync from the cases' [[message]]
            found += handwritten(page, _paragraphs(page), anywhere)
    assert not found, "write {{ era_KEY.PACKAGE }} instead:\n" + "\n".join(found)


def test_the_check_finds_a_hand_written_era_version():
    """The check itself: the sentence as it was before the reference, and after."""
    pins = {"jax": {"0.4.25"}, "optax": {"0.1.9"}}
    before = "The newest releases on PyPI that day were jax and\njaxlib 0.4.25, optax 0.1.9."
    assert len(handwritten("p", [before], pins)) == 2
    after = "The newest releases on PyPI that day were jax {{ era_optax_828.jax }}."
    assert handwritten("p", [after, "Run on optax 0.1.9 over today's jax."], pins) == []
    assert handwritten("p", ["In the reporter's stack `jax 0.4.25` ran."], pins) == []

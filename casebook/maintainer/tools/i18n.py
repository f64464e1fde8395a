"""The book's other languages, Sphinx's way: gettext catalogs kept by sphinx-intl.

English is the source. ``sphinx-build -b gettext`` extracts every paragraph, heading and
table cell of the pages into ``.pot`` templates (one per page, ``gettext_compact: false``
in ``_config.yml``); ``sphinx-intl update`` merges them into
``locale/LANG/LC_MESSAGES/PAGE.po``, adding new entries untranslated and marking an entry
whose English changed *fuzzy* (Sphinx then shows the English until a translator clears the
flag). The book is then built a second time with ``language = LANG`` into
``_build/html/LANG/``; an untranslated or fuzzy entry falls back to English. Code blocks,
literals and outputs are never extracted, so messages stay verbatim.

Only the reader's doors are kept in catalogs (:data:`PAGES`): the other pages' templates are
dropped before the merge, so their stories and records stay English and no catalog holds
entries nobody is asked to translate. On a case page the card and the exercises' statements
are in scope (:func:`in_scope`); the rest of its catalog is the story, which may stay English.

Both Sphinx runs go through Jupyter Book's own ``build_sphinx``, with ``_config.yml`` and
``_toc.yml`` as ``jupyter-book build`` reads them, so the two languages share one
configuration; the translated build reads the English build's execution cache
(``_build/.jupyter_cache``) and keeps its own doctrees.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from casebook.cases import CASES
from casebook.project import ROOT

if TYPE_CHECKING:
    from babel.messages.catalog import Message

__all__ = [
    "DOORS",
    "LANGUAGES",
    "PAGES",
    "build",
    "card",
    "catalog",
    "counts",
    "entries",
    "in_scope",
    "main",
    "update",
]

LANGUAGES = ("zh_CN",)
"""The book's translations; each is built into ``_build/html/LANG/``."""

DOORS = ("book/intro", "book/how-to-read", "book/errors", "book/teach", "book/glossary")
"""The pages translated whole."""

PAGES = DOORS + tuple(case.docname for case in CASES)
"""The pages with a catalog: the doors, and each case's page (for its card). A new case's page
joins by itself: ``sync`` writes its catalog, and the translation test asks for its card."""


def catalog(page: str, language: str, locale: Path | None = None) -> Path:
    """The ``.po`` file of ``page`` (a docname) in ``language``."""
    return (locale or ROOT / "locale") / language / "LC_MESSAGES" / f"{page}.po"


def build(builder: str, out: Path, language: str = "en", execute: bool = True) -> int:
    """Run Sphinx over the book with ``builder`` into ``out``, in ``language``, as
    ``jupyter-book build`` would (warnings as errors, nitpicky), with the English build's
    execution cache; ``execute=False`` runs no page (outputs are not translated) and
    writes no handouts."""
    from jupyter_book.sphinx import build_sphinx

    build_dir = ROOT / "_build"  # not the site's folder: nothing there is published
    overrides = {
        "external_toc_path": (ROOT / "_toc.yml").as_posix(),
        "nitpicky": True,
        "latex_individualpages": False,
        "language": language,
        "nb_execution_cache_path": str(ROOT / "_build" / ".jupyter_cache"),
    }
    if not execute or language != "en":  # a shared link's card image: no CJK font to draw it
        overrides["ogp_social_cards"] = {"enable": False}
    if not execute:  # the tests' site: no page run, no handouts cut
        overrides["nb_execution_mode"] = "off"
        overrides["casebook_handouts"] = False
    result = build_sphinx(
        ROOT,
        out,
        noconfig=True,
        path_config=str(ROOT / "_config.yml"),
        confoverrides=overrides,
        doctreedir=(build_dir if out.is_relative_to(build_dir / "html") else out.parent)
        / f".doctrees-{builder}-{language}",
        builder=builder,
        warningiserror=execute,  # a page not executed warns of its glue
        keep_going=True,
        quiet=True,
        really_quiet=not execute,  # the glue of pages not executed: nothing to fix
    )
    return result if isinstance(result, int) else 1


def update(locale: Path | None = None, work: Path | None = None) -> None:
    """Extract the pages' messages and merge them into the catalogs of every language
    (``locale``, the checkout's ``locale/`` by default): new entries untranslated, changed
    ones fuzzy. ``work`` holds the templates (``_build/gettext`` by default)."""
    work = work or ROOT / "_build" / "gettext"
    shutil.rmtree(work, ignore_errors=True)
    if build("gettext", work, execute=False) != 0:
        raise SystemExit("casebook i18n: the gettext build failed")
    kept = {work / f"{page}.pot" for page in PAGES}
    for pot in work.rglob("*.pot"):
        if pot not in kept:
            pot.unlink()
    languages = [a for lang in LANGUAGES for a in ("-l", lang)]
    intl = Path(sys.executable).parent / "sphinx-intl"
    subprocess.run(
        [str(intl), "update", "-j", "1", "-p", str(work), "-d", str(locale or ROOT / "locale")]
        + languages,
        check=True,
    )
    _fill_code_only(locale or ROOT / "locale")


def card(page: str) -> str | None:
    """What a case page's catalog must translate: its card (the first Markdown cell, which
    ``sync`` writes) and its exercises' statements (the cells holding an ``{exercise}``),
    which the student editions hand out; ``None`` for a page that is not a case's, whose
    whole catalog is in scope."""
    path = ROOT / f"{page}.ipynb"
    if not page.startswith("notebooks/") or not path.exists():
        return None
    cells = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "markdown"]
    texts = ["".join(c["source"]) for c in cells]
    return "\n".join([texts[0], *(t for t in texts[1:] if "{exercise}" in t)])


def in_scope(page: str, msgid: str) -> bool:
    """Whether a reader of the translation must find ``msgid`` of ``page`` translated: every
    entry of a door page, and on a case page those of its card and exercises."""
    text = card(page)
    return text is None or " ".join(msgid.split()) in " ".join(text.split())


def _code_only(msgid: str) -> bool:
    """An entry with nothing to translate: only code, numbers and punctuation."""
    prose = re.sub(r"\{\w+\}`([^`<]*)<[^>]*>`", r"\1", msgid)  # a role's own text
    prose = re.sub(r"\{\w+\}|`[^`]*`|\]\([^)]*\)", "", prose)  # roles, code, link targets
    return not re.search(r"[A-Za-z]{2,}", prose)


def _fill_code_only(locale: Path) -> None:
    """Give each untranslated entry that holds only code itself as its translation: code is
    never translated, and a translator is not asked to copy it."""
    from babel.messages import pofile

    for po in locale.glob("*/LC_MESSAGES/**/*.po"):
        with po.open("rb") as f:
            cat = pofile.read_po(f)
        todo = [m for m in cat if isinstance(m.id, str) and not m.string and _code_only(m.id)]
        for m in todo:
            m.string = m.id
        if todo:
            with po.open("wb") as f:
                pofile.write_po(f, cat, width=76)


def entries(page: str, language: str, locale: Path | None = None) -> list[Message]:
    """The entries of ``page``'s catalog in ``language`` that are in scope (:func:`in_scope`)."""
    from babel.messages import pofile

    with catalog(page, language, locale).open("rb") as f:
        return [m for m in pofile.read_po(f) if m.id and in_scope(page, str(m.id))]


def counts(language: str, locale: Path | None = None) -> dict[str, dict[str, int]]:
    """For each page of :data:`PAGES`: its scoped entries, translated, untranslated, fuzzy."""
    out = {}
    for page in PAGES:
        found = entries(page, language, locale)
        fuzzy = sum(m.fuzzy for m in found)
        untranslated = sum(not m.string for m in found)
        out[page] = {
            "translated": len(found) - fuzzy - untranslated,
            "untranslated": untranslated,
            "fuzzy": fuzzy,
        }
    return out


def main(argv: list[str]) -> int:
    """``python -m casebook.maintainer.tools.i18n update|html|counts``: refresh the catalogs (``sync``
    runs it); build each translation into ``_build/html/LANG/`` (``book`` runs it; ``--out
    DIR``, ``--not-executed``); or print each page's scoped entries: translated, untranslated,
    fuzzy. A translation is built in a process of its own: Sphinx keeps the catalogs it has
    loaded for the rest of the process, so a later English build there would be translated."""
    if argv[:1] == ["update"]:
        update()
        return 0
    if argv[:1] == ["html"]:  # each translation, beside the English site (or under --out)
        out = Path(argv[argv.index("--out") + 1]) if "--out" in argv else ROOT / "_build" / "html"
        execute = "--not-executed" not in argv
        return max(build("html", out / lang, lang, execute) for lang in LANGUAGES)
    if argv[:1] == ["counts"]:
        for lang in LANGUAGES:
            for page, n in counts(lang).items():
                print(lang, page, *(f"{k} {v}" for k, v in n.items()))
        return 0
    print(main.__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

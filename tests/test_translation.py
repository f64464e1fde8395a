"""The zh_CN edition, checked where it is shown: its catalogs and its built pages.

The catalogs are refreshed as ``python3 -m casebook sync`` refreshes them (the pages'
messages extracted by Sphinx's gettext builder and merged by sphinx-intl), into a copy of
``locale/``: every entry a scoped page shows (a door page whole, a case page's card) must
be translated and not fuzzy, so an English sentence that changed since its translation
fails here, named with its page, until a translator clears it. The zh site, built as
``python3 -m casebook book`` builds it (the pages not executed: outputs are not translated),
must show each card's code blocks and messages, and the Errors page's, exactly as the
English site does: code and messages are never translated, and readers search for them.
"""

from __future__ import annotations

import collections
import html
import re
import shutil
from pathlib import Path

import pytest

from casebook import cases
from casebook.maintainer.tools import i18n

ROOT = Path(__file__).resolve().parent.parent
LANGUAGE = "zh_CN"


@pytest.fixture(scope="module")
def catalogs(tmp_path_factory) -> Path:
    """A copy of ``locale/`` with today's pages merged in, as ``sync`` would leave it."""
    locale = tmp_path_factory.mktemp("locale")
    shutil.copytree(ROOT / "locale", locale, dirs_exist_ok=True)
    i18n.update(locale=locale, work=tmp_path_factory.mktemp("pot"))
    return locale


@pytest.mark.parametrize("page", i18n.PAGES)
def test_every_scoped_entry_is_translated_and_not_fuzzy(catalogs, page):
    found = i18n.entries(page, LANGUAGE, catalogs)
    assert found, f"{page}: no entry in scope (is the page in _toc.yml?)"
    todo = [
        ("fuzzy" if m.fuzzy else "untranslated", m.id) for m in found if m.fuzzy or not m.string
    ]
    assert not todo, (
        f"{page}: {len(todo)} entries need a translator in "
        f"locale/{LANGUAGE}/LC_MESSAGES/{page}.po (after `python3 -m casebook sync`): {todo[:5]}"
    )


@pytest.fixture(scope="module")
def sites(site, zh_site) -> dict[str, Path]:
    """The English and the zh site (``tests/conftest.py``: built once per test run, shared
    with the browser tests)."""
    return {"en": site, LANGUAGE: zh_site}


CARD = re.compile(r'<div class="[^"]*casebook-card[^"]*">.*?</details></div>', re.S)
"""A built case page's card: the admonition ``sync`` writes, to its older wordings."""


def shown_code(page: str) -> collections.Counter[str]:
    """Every code block and inline code of a built page's text, as the reader sees them."""
    blocks = re.findall(r"<pre[^>]*>(.*?)</pre>|<code[^>]*>(.*?)</code>", page, flags=re.S)
    return collections.Counter(html.unescape(re.sub(r"<[^>]+>", "", a or b)) for a, b in blocks)


def article(page: Path) -> str:
    text = page.read_text()
    return text[text.index("<article") : text.index("</article>")]


@pytest.mark.parametrize("case", cases.CASES, ids=lambda c: c.key)
def test_a_translated_card_shows_the_english_card_s_code_and_messages(sites, case):
    english, chinese = (
        CARD.search(article(sites[lang] / f"{case.docname}.html")) for lang in sites
    )
    assert english and chinese, case.docname
    en, zh = shown_code(english[0]), shown_code(chinese[0])
    assert zh == en, f"differs: only in zh {zh - en}; only in English {en - zh}"
    words = re.sub(r"<pre.*?</pre>|<code.*?</code>", "", chinese[0], flags=re.S)
    assert "**" not in words, "a translation's Markdown shows raw"


def test_the_translated_errors_page_shows_every_message_verbatim(sites):
    en, zh = (shown_code(article(sites[lang] / "book" / "errors.html")) for lang in sites)
    assert zh == en, f"differs: only in zh {zh - en}; only in English {en - zh}"


def test_the_language_link_opens_the_same_page_in_the_other_language(sites):
    page = cases.CASES[0].docname
    english = (sites["en"] / f"{page}.html").read_text()
    chinese = (sites[LANGUAGE] / f"{page}.html").read_text()
    assert f'href="../{LANGUAGE}/{page}.html"' in english
    assert f'href="../../{page}.html"' in chinese
    assert '<html lang="zh-CN"' in chinese or 'lang="zh_CN"' in chinese

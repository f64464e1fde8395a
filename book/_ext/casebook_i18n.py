"""The book's own Sphinx extension: a link in the header to the same page in the other language.

The English site is ``_build/html/``, the zh_CN edition ``_build/html/zh_CN/``
(:mod:`casebook.maintainer.tools.i18n`), page for page, so the other language's page is the same
docname one folder down (English to zh_CN) or up (zh_CN to English). The link is one more of
the theme's header buttons, labelled in the language it leads to.

It also registers Sphinx's own Chinese search language, with one change: Sphinx keeps every
Latin word it splits from the pages in a list and asks that list about each word it stems,
which grows with the square of the site's words (5 of 22 s building the zh_CN site, 2 cores).
A set answers the same questions: the search index it writes is byte for byte the same.
"""

from __future__ import annotations

from typing import Any

from sphinx.search.zh import SearchChinese

OTHER = {"en": ("zh_CN/", "中文"), "zh_CN": ("../", "English")}
"""For each language of a build: where the other language's site is, and its link's label."""


def _add_switch(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    where, label = OTHER.get(app.config.language, OTHER["en"])
    url = context["pathto"](f"{where}{pagename}.html", 1)
    context.setdefault("header_buttons", []).insert(
        0,
        {
            "type": "link",
            "url": url,
            "tooltip": label,
            "icon": "fas fa-language",
            "text": label,
            "label": "language-switch",
        },
    )


class _LatinTerms(set):
    extend = set.update  # what SearchChinese.split calls


class _SearchChinese(SearchChinese):
    def init(self, options: dict[str, str]) -> None:
        super().init(options)
        self.latin_terms = _LatinTerms()  # type: ignore[assignment]


def setup(app: Any) -> dict[str, Any]:
    app.add_search_language(_SearchChinese)
    app.connect("html-page-context", _add_switch, priority=600)  # after the theme's buttons
    return {"parallel_read_safe": True, "parallel_write_safe": True}

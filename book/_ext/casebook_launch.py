"""The book's own Sphinx extension: the Colab launch button opens the page in plain Markdown.

sphinx-book-theme's Colab button opens the page's own notebook from the repository, whose
Markdown is MyST: Colab shows it raw. ``sync`` commits a plain twin of each executed page
under ``handouts/pages/`` (:mod:`casebook.workshop.launch`); after the theme has made its
buttons, this points the Colab one at that twin, on the same repository and branch. A
notebook page without a committed twin keeps the theme's link, and the build says so; a
MyST Markdown page (``book/how-to-read.md``) loses the button, whose link to the ``.md``
Colab cannot open (Binder, which can, keeps its own).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sphinx.util import logging

from casebook.workshop import launch

LOGGER = logging.getLogger(__name__)


def colab_url(url: str, pagename: str) -> str:
    """The theme's Colab ``url`` for ``pagename``, opening its plain twin instead."""
    base, _, page = url.rpartition("/blob/")
    branch = page.split("/", 1)[0]
    return f"{base}/blob/{branch}/{launch.path_of(pagename)}"


def _point_colab(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    for group in context.get("header_buttons", []):
        if group.get("label") != "launch-buttons":
            continue
        for button in list(group["buttons"]):
            if button.get("text") != "Colab":
                continue
            if Path(app.env.doc2path(pagename)).suffix != ".ipynb":
                group["buttons"].remove(button)  # a MyST page: Colab cannot open its .md
            elif not (Path(app.srcdir) / launch.path_of(pagename)).exists():
                LOGGER.warning(f"no plain twin of {pagename}: run python3 -m casebook sync")
            else:
                button["url"] = colab_url(button["url"], pagename)


def setup(app: Any) -> dict[str, Any]:
    # after sphinx-book-theme's add_launch_buttons (priority 501)
    app.connect("html-page-context", _point_colab, priority=510)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

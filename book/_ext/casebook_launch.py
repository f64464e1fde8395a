"""The book's own Sphinx extension: the launch buttons open the page in plain Markdown.

sphinx-book-theme's Colab and Binder buttons open the page's own notebook from the
repository, whose Markdown is MyST: Colab and Jupyter show it raw. ``sync`` commits a plain
twin of each executed page under ``handouts/pages/`` (:mod:`casebook.maintainer.workshop.launch`):
the same code cells, its Markdown plain; a page written as a MyST notebook
(``book/how-to-read.md``) has one too. After the theme has made its buttons, this points
both at that twin, on the same repository and branch. A notebook page without a committed
twin keeps the theme's links, and the build says so; a MyST page without one loses the
Colab button, whose link to the ``.md`` Colab cannot open, and keeps Binder's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sphinx.util import logging

from casebook.maintainer.workshop import launch

LOGGER = logging.getLogger(__name__)


def colab_url(url: str, pagename: str) -> str:
    """The theme's Colab ``url`` for ``pagename``, opening its plain twin instead."""
    base, _, page = url.rpartition("/blob/")
    branch = page.split("/", 1)[0]
    return f"{base}/blob/{branch}/{launch.path_of(pagename)}"


def binder_url(url: str, pagename: str) -> str:
    """The theme's Binder ``url`` (``...?urlpath=tree/PAGE`` or ``lab/tree/PAGE``) for
    ``pagename``, opening its plain twin instead."""
    base, _, path = url.partition("?urlpath=")
    interface = path[: path.index("tree/") + len("tree/")]
    return f"{base}?urlpath={interface}{launch.path_of(pagename)}"


TWIN_URLS = {"Colab": colab_url, "Binder": binder_url}
"""The launch buttons that open a page's plain twin, by the theme's button text."""


def _point_launch_buttons(
    app: Any, pagename: str, templatename: str, context: dict, doctree: Any
) -> None:
    for group in context.get("header_buttons", []):
        if group.get("label") != "launch-buttons":
            continue
        for button in list(group["buttons"]):
            twin_url = TWIN_URLS.get(button.get("text", ""))
            if twin_url is None:
                continue
            if (Path(app.srcdir) / launch.path_of(pagename)).exists():
                button["url"] = twin_url(button["url"], pagename)
            elif Path(app.env.doc2path(pagename)).suffix != ".ipynb":
                if button["text"] == "Colab":
                    group["buttons"].remove(button)  # a MyST page: Colab cannot open its .md
            else:
                LOGGER.warning(f"no plain twin of {pagename}: run python3 -m casebook sync")


def setup(app: Any) -> dict[str, Any]:
    # after sphinx-book-theme's add_launch_buttons (priority 501)
    app.connect("html-page-context", _point_launch_buttons, priority=510)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

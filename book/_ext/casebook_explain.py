"""The book's own Sphinx extension: ``explain`` in the Errors page.

The page's paste box (``book/_static/explain.js``) ranks a pasted traceback in the browser
with ``explain``'s own data: after an HTML build, :func:`casebook.explain._export.script`
is written into the site as ``_static/explain-data.js``, and the Errors page loads both
scripts (no other page does).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from casebook.explain import _export

PAGE = "book/errors"


def _scripts(app: Any, pagename: str, *_: Any) -> None:
    if pagename == PAGE:
        app.add_js_file("explain-data.js")
        app.add_js_file("explain.js")


def _write_data(app: Any, exception: Exception | None) -> None:
    if exception is None and app.builder.format == "html":
        static = Path(app.outdir) / "_static"
        static.mkdir(parents=True, exist_ok=True)
        (static / "explain-data.js").write_text(_export.script())


def setup(app: Any) -> dict[str, Any]:
    app.connect("html-page-context", _scripts)
    app.connect("build-finished", _write_data)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

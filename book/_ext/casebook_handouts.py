"""The book's own Sphinx extension: the workshop's handouts, published with the site.

A teacher gets the editions from the built book, not from a clone: after an HTML build,
``handouts/student.zip`` (the student editions ``sync`` commits under ``handouts/student/``,
which the teach page's Colab links open from the repository) and ``handouts/teacher.zip``
(each page's teacher edition, with the solutions and their checks) are written into the
site (:func:`casebook.maintainer.workshop.zip_handouts`). The teach page links both. A translation's
site (``_build/html/zh_CN/``) gets its own, cut from the pages rendered in its language.
``casebook_handouts = False`` writes none: the tests' translated site, whose pages are not
executed, needs no handouts, and cutting them renders every page again in its language
(about 25 s on 2 cores, whenever one page changed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from casebook.maintainer import workshop


def _write_handouts(app: Any, exception: Exception | None) -> None:
    if exception is None and app.builder.format == "html" and app.config.casebook_handouts:
        workshop.zip_handouts(Path(app.outdir), language=app.config.language or "en")


def setup(app: Any) -> dict[str, Any]:
    app.add_config_value("casebook_handouts", True, "")
    app.connect("build-finished", _write_handouts)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

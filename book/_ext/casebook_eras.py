"""The book's own Sphinx extension: the eras' versions, as MyST substitutions for the prose.

An era's versions are written once, in its lock (``casebook/cases/KEY/era.txt``). A page
that names the reporter's stack writes ``{{ era_optax_828.jax }}``, and this extension fills
every era's versions into ``myst_substitutions`` when the configuration is read
(``casebook.cases.era_substitutions``), so no cell has to run for the words to show: the
HTML, the translated build (a catalog's ``msgstr`` keeps the same reference) and the plain
twins (``casebook.maintainer.workshop._plain`` passes the same table) render the lock's
version. A changed lock changes the configuration, so Sphinx reads the pages again.
"""

from __future__ import annotations

from typing import Any

from casebook import cases


def _fill(app: Any, config: Any) -> None:
    config.myst_substitutions = {**cases.era_substitutions(), **config.myst_substitutions}


def setup(app: Any) -> dict[str, Any]:
    app.connect("config-inited", _fill)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

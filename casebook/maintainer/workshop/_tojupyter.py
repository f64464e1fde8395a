"""The Sphinx builder that renders the book's pages as plain notebooks: sphinx-tojupyter's,
with six of its gaps closed for this book's markup.

sphinx-tojupyter (the ``jupyter`` builder) turns each page's doctree into a notebook whose
Markdown Colab and Jupyter render: roles, targets and directives resolved by Sphinx itself,
so a citation or a cross-reference is the link the web page has. On this book's pages it
falls short in six places, each closed here by a subclass, not a copy:

* a table cell's inline markup (bold, code, links, citations) lands before the table, not
  in its cell: :class:`PlainTranslator` gathers each cell's Markdown and puts it in place;
* a dropdown (sphinx-design) loses its fold: it becomes ``<details>`` with its title as the
  ``<summary>``, as the web page shows it;
* an admonition's title becomes a heading of the page and an exercise's title a section:
  the first is written bold, the second one level below the section that holds it;
* a reference by number (``{ref}`` to an exercise) loses its link: it keeps it;
* its builder's ``finish`` calls ``exit()``; here it does nothing, as nothing runs;
* ``{glue:text}`` has nothing to paste, as the pages are read without outputs: it is
  written as a pointer to the cell that prints the number.

The builder writes again only the pages whose source is newer than their output; when a
page changed what another shows of it (its title, a number, a label), :func:`setup`'s
handlers have every page written again, so that a render in a kept folder
(:func:`._plain._render`) is the render from scratch.

Registered by :func:`setup` as the builder ``casebook-plain`` (:mod:`._plain` runs it).
"""

from __future__ import annotations

import pprint
from typing import Any

from docutils import nodes
from myst_nb.ext.glue.domain import NbGlueDomain
from sphinx_tojupyter.builders.jupyter import JupyterBuilder
from sphinx_tojupyter.writers.jupyter import JupyterWriter
from sphinx_tojupyter.writers.translate_all import JupyterTranslator

BUILDER = "casebook-plain"

GLUED = "(the number the cell above prints)"
"""What a ``{glue:text}`` role reads as: the page's number is printed by the cell before it."""


def _glued(
    name: str,
    rawtext: str,
    text: str,
    lineno: int,
    inliner: Any,
    options: Any = None,
    content: Any = None,
) -> tuple[list[nodes.Node], list[Any]]:
    return [nodes.Text(GLUED)], []


class _GlueDomain(NbGlueDomain):
    roles = {**NbGlueDomain.roles, "text": _glued}


class PlainTranslator(JupyterTranslator):
    """sphinx-tojupyter's translator, with tables, dropdowns and titles as described above."""

    table_builder: Any  # the tool's: a dict while it writes a table, else None

    def __init__(self, builder: Any, document: Any) -> None:
        super().__init__(builder, document)
        self._entry: int | None = None
        self._bold_title = False

    # A table cell: its Markdown is gathered in markdown_lines, then moved into the row.
    def visit_entry(self, node: nodes.Element) -> None:
        self._entry = len(self.markdown_lines)

    def depart_entry(self, node: nodes.Element) -> None:
        assert self._entry is not None
        cell = "".join(self.markdown_lines[self._entry :]).strip()
        del self.markdown_lines[self._entry :]
        self._entry = None
        self.table_builder["line_pending"] += (
            " " + " ".join(cell.split()).replace("|", r"\|") + " |"
        )

    def visit_Text(self, node: nodes.Text) -> None:
        if self._entry is None:
            return super().visit_Text(node)
        # the tool writes text to markdown_lines where no table is being built
        table, self.table_builder = self.table_builder, None
        try:
            super().visit_Text(node)
        finally:
            self.table_builder = table

    # A dropdown (sphinx-design's container, outside HTML): <details>, its title (a
    # rubric) the <summary>.
    def visit_container(self, node: nodes.Element) -> None:
        if node.get("design_component") == "dropdown":
            self.markdown_lines.append("\n<details>\n")
        super().visit_container(node)

    def depart_container(self, node: nodes.Element) -> None:
        if node.get("design_component") == "dropdown":
            self.markdown_lines.append("\n</details>\n\n")
        super().depart_container(node)

    def visit_rubric(self, node: nodes.Element) -> None:
        if node.parent.get("design_component") != "dropdown":
            return super().visit_rubric(node)
        self.markdown_lines.append("<summary>")

    def depart_rubric(self, node: nodes.Element) -> None:
        if node.parent.get("design_component") != "dropdown":
            return super().depart_rubric(node)
        self.markdown_lines.append("</summary>\n\n")

    # A reference by number ({ref} to an exercise): a link, as any reference.
    def visit_number_reference(self, node: nodes.Element) -> None:
        self.visit_reference(node)

    def depart_number_reference(self, node: nodes.Element) -> None:
        self.depart_reference(node)

    # Titles: an admonition's in bold, an exercise's one level below its section.
    def visit_title(self, node: nodes.Element) -> None:
        exercise = type(node.parent).__module__.startswith("sphinx_exercise")
        if isinstance(node.parent, nodes.Admonition) and not exercise:
            self._bold_title = True
            self.markdown_lines.append("**")
            return
        if exercise:
            self.section_level += 1
            try:
                super().visit_title(node)
            finally:
                self.section_level -= 1
            return
        super().visit_title(node)

    def depart_title(self, node: nodes.Element) -> None:
        if self._bold_title:
            self._bold_title = False
            self.markdown_lines.append("**\n\n")
            return
        super().depart_title(node)


class _PlainWriter(JupyterWriter):
    def _identify_translator(self, builder: Any) -> type:
        return PlainTranslator


class PlainBuilder(JupyterBuilder):
    """The ``jupyter`` builder, writing with :class:`PlainTranslator`."""

    name = BUILDER
    _writer_class = _PlainWriter

    def finish(self) -> None:
        """Nothing to finish: no execution, no site; the tool's own ``finish`` ends the
        process (``exit``), which a caller in the same process cannot have."""


def _shown_elsewhere(env: Any) -> str:
    """What a page's Markdown may show of another page: its title, its section and figure
    (exercise) numbers, its labels with their titles, its glossary terms."""
    titles = {doc: title.astext() for doc, title in env.titles.items()}
    shown = [titles, env.toc_secnumbers, env.toc_fignumbers, env.domaindata["std"]]
    return pprint.pformat(shown)  # dicts and sets in sorted order


def _before_reading(app: Any, env: Any, *changes: set[str]) -> list[str]:
    """Before a removed page is purged and the changed ones are read again: what they show."""
    env.casebook_shown = _shown_elsewhere(env)
    return []


def _every_page_if_shown_changed(app: Any, env: Any) -> list[str]:
    """After the pages that changed are read again and numbered: every page is written
    again when what one page shows of another changed (the builder writes only the pages
    whose source is newer than their output)."""
    if getattr(env, "casebook_shown", None) == _shown_elsewhere(env):
        return []
    return sorted(env.found_docs)


def setup(app: Any) -> dict[str, Any]:
    app.setup_extension("sphinx_tojupyter")
    app.add_builder(PlainBuilder)
    app.add_domain(_GlueDomain, override=True)
    app.connect("env-get-outdated", _before_reading)
    # after Sphinx's own handler has numbered the sections and figures (priority 500)
    app.connect("env-get-updated", _every_page_if_shown_changed, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

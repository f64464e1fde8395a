"""``python3 -m casebook sync``: write everything a reader sees that the registry derives.

The case folders (``casebook/cases/<key>/``: ``case.toml`` and ``scripts/``) are the one
source of what the book says about each case. One command writes every file made from
them, and from the package's other single sources:

* in each page (``notebooks/*.ipynb``, ``book/*.ipynb``): the set-up cell (from
  ``_config.yml``), the program blocks (from the program modules), and in a case page the
  card and each exercise's "What a correct answer prints" (:mod:`casebook.maintainer.sync._card`);
  then each page's MyST twin (``.md``);
* the case tables of ``README.md`` and ``book/intro.md``, and the Colab links of
  ``book/teach.md``;
* from ``casebook/check/families.toml``, the families table of the lessons page, of
  ``book/intro.md`` and ``README.md``, and the lessons page's family headings
  (:mod:`casebook.maintainer.sync._families`);
* the Errors page (``book/errors.md``), grouped by case, from the messages;
* the workshop plan in ``book/teach.md``, a block per case (its ``[workshop]`` table),
  with the measured minutes;
* the student edition of each workshop page (``handouts/student/``), committed so that
  the teach page's Colab links open it from the repository;
* each executed page whole in plain Markdown (``handouts/pages/``), which the book's Colab
  launch buttons open (:mod:`casebook.maintainer.workshop.launch`).

``python3 -m casebook sync`` (the command, not :func:`sync`) then merges the pages' messages
into the translations' gettext catalogs, ``locale/LANG/LC_MESSAGES/`` (sphinx-intl, through
:mod:`casebook.maintainer.tools.i18n`): a new sentence is added untranslated, a changed one is marked
fuzzy, and ``tests/test_translation.py`` names both until a translator has been.

:func:`expected` computes all of them without writing; :func:`sync` writes those that
differ; :func:`stale` lists them, and ``tests/test_sync.py`` fails, naming this command,
while one is stale. ``python3 -m casebook new`` runs it after writing a new case's folder.

A twin edited after its notebook (newer, and not the notebook's twin) is never overwritten:
bring the edit into the notebook first (``jupytext --to ipynb --update -o PAGE.ipynb
PAGE.md``), then sync.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path

from casebook.cases import CASES, FAMILIES, BugFamily, Case, load, read_families
from casebook.project import ROOT

__all__ = ["COMMAND", "expected", "main", "stale", "sync"]

COMMAND = "python3 -m casebook sync"


def _cases(root: Path) -> tuple[Case, ...]:
    return CASES if Path(root).resolve() == ROOT.resolve() else load(root / "casebook" / "cases")


def _families_of(root: Path) -> tuple[BugFamily, ...]:
    path = Path(root) / "casebook" / "check" / "families.toml"
    return FAMILIES if Path(root).resolve() == ROOT.resolve() else read_families(path)


def _page(path: Path, root: Path, cases: Iterable[Case], families: Iterable[BugFamily]) -> str:
    """A page's notebook text as sync writes it."""
    from casebook.maintainer.sync import _blocks, _card, _families
    from casebook.maintainer.tools import colab, pairs

    nb = json.loads(path.read_text())
    cells = colab.with_setup_cell(nb["cells"], root / "_config.yml")
    for cell in cells:
        # No empty tag list: `jupytext --update` keeps one over a tag added in the twin.
        if cell.get("metadata", {}).get("tags") == []:
            del cell["metadata"]["tags"]
        if cell["cell_type"] == "markdown":
            text = "".join(cell["source"])
            new = _families.rewrite(_blocks.rewrite(text), families, cases)
            if new != text:
                cell["source"] = new.splitlines(keepends=True)
    docname = path.relative_to(root).with_suffix("").as_posix()
    case = next((c for c in cases if c.docname == docname), None)
    if case is not None:
        cells = _card.rewrite_answers(_card.rewrite_card(cells, case), case)
        cells = _card.rewrite_facts(cells, case)
    nb["cells"] = cells
    return json.dumps(pairs.paired(nb), indent=1, ensure_ascii=False) + "\n"


def expected(root: Path = ROOT) -> dict[Path, str]:
    """Every generated file under ``root`` and the text it must hold."""
    from casebook.maintainer import workshop
    from casebook.maintainer.sync import _families, _tables, errorspage
    from casebook.maintainer.tools import colab, pairs
    from casebook.maintainer.workshop import launch, plan

    root = Path(root)
    cases, families = _cases(root), _families_of(root)
    out: dict[Path, str] = {}
    for page in colab.pages(root):
        text = _page(page, root, cases, families)
        out[page] = text
        out[pairs.twin(page)] = pairs.myst(text)
    config = root / "_config.yml"
    repository = colab.repository(config if config.exists() else colab.CONFIG)
    for file in _tables.FILES:
        text = out.get(root / file) or (root / file).read_text()
        if file == "book/teach.md":
            text = plan.rewritten(text, cases, families)
        text = _tables.rewritten(text, file, cases, repository=repository)
        out[root / file] = _families.rewrite(text, families, cases, book=file != "README.md")
    out[root / "book" / "errors.md"] = errorspage.page_text(cases, families)
    out.update(workshop.handouts(root, out, plan.pages(cases)))  # cut from the pages above
    out.update(launch.notebooks(root, out))  # what the launch buttons open: the same render
    return out


def stale(root: Path = ROOT) -> list[Path]:
    """The generated files whose text is not what :func:`expected` gives."""
    return [
        path
        for path, text in expected(root).items()
        if not path.exists() or path.read_text() != text
    ]


def _write(root: Path) -> tuple[list[Path], list[Path]]:
    """Write every stale generated file under ``root``: ``(written, held)``, where ``held``
    are the notebooks whose twin holds edits the notebook lacks (neither is rewritten)."""
    from casebook import storage
    from casebook.maintainer.tools import pairs

    todo = expected(root)
    held = []
    for path in list(todo):
        twin = path.with_suffix(".md")
        if path.suffix != ".ipynb" or not twin.exists():
            continue
        edited = twin.read_text() != pairs.myst(path.read_text())  # not the notebook's twin
        if edited and twin.stat().st_mtime > path.stat().st_mtime:
            print(
                f"casebook sync: {twin.name} is newer than {path.name}; neither rewritten. Run "
                f"jupytext --to ipynb --update -o {path.name} {twin.name} first"
            )
            del todo[twin], todo[path]
            held.append(path)
    written = []
    for path, text in todo.items():
        if not path.exists() or path.read_text() != text:
            storage.write_atomic(path, text)
            written.append(path)
    return written, held


def sync(root: Path = ROOT) -> list[Path]:
    """Write every stale generated file under ``root``; return those written. A MyST twin
    edited after its notebook is left alone, with its notebook, and a message."""
    return _write(root)[0]


def main(argv: list[str]) -> int:
    """``sync [--check] [--root DIR]``: write the stale files (exit 1 when a twin's edits
    held a page back), or with ``--check`` list them and exit 1. ``--root`` names another
    checkout (``new --root``, the scaffold's tests)."""
    root = Path(argv[argv.index("--root") + 1]) if "--root" in argv else ROOT
    if "--check" in argv:
        late = stale(root)
        for path in late:
            print(f"casebook sync: stale: {path.relative_to(root)}")
        if late:
            print(f"casebook sync: run `{COMMAND}`")
        return 1 if late else 0
    written, held = _write(root)
    if root.resolve() == ROOT.resolve():  # the translations' catalogs: changed English fuzzy
        from casebook.maintainer.tools import i18n

        i18n.update()
    for path in written:
        print(f"casebook sync: wrote {path.relative_to(root)}")
    if not written and not held:
        print("casebook sync: all in sync")
    return 1 if held else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

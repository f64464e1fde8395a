"""Each page's cells with its Markdown in plain Markdown: what Colab and Jupyter render.

The book's pages are MyST: roles (``{cite}``, ``{ref}``, ``{doc}``, ``{glue:text}``),
targets, admonitions, dropdowns, exercises. Colab shows all of it raw. :func:`render_book`
has Sphinx render every page with sphinx-tojupyter (the builder of
:mod:`casebook.maintainer.workshop._tojupyter`, execution off, so it takes seconds), reading the book's
own ``_config.yml`` through jupyter-book: a citation or a cross-reference comes out as the
link the web page has, an exercise with the number the web page gives it.

sphinx-tojupyter drops hidden cells and keeps no cell tags, and the editions need both. So
the pages are handed to it with their tags taken off, and a sentinel code cell after each
cell; its notebook is cut at the sentinels, one piece per page cell, and each page cell
gets its own piece: a code cell must come back source for source (else
:class:`Mismatch`), a Markdown cell's piece is its plain Markdown. Links the tool writes
relative to the page (``../book/references.ipynb#id2``, ``#case1-repro``) point at the
published book (``BOOK_URL``), where every section a link names is.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import json
import re
import shutil
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePosixPath
from urllib.parse import urljoin

from casebook import storage
from casebook.project import BOOK_URL, ROOT

SOURCES = (
    "_config.yml",
    "_toc.yml",
    "book/references.bib",
    "book/*.md",
    "book/*.ipynb",
    "notebooks/*.ipynb",
)
"""What Sphinx reads: the book's configuration, its bibliography, and every page (a
cross-reference may name any of them)."""

SHARED = ("_config.yml", "_toc.yml", "book/references.bib")
"""The sources every page's render reads: a change to one renders every page afresh."""

SENTINEL = "# casebook: the end of a page cell"

LEXER = "ipython3"
"""The pages' code cells' language: the tool makes a code cell of a block in it, and leaves
a fenced block in any other (``python`` on a card) in the Markdown."""

NOT_HERE = {
    # besides the book's own (book/_ext, _config.yml's local_extensions: page metadata, the
    # %%on_release label, the handouts' zips, the launch buttons, the paste box), the HTML site's: sitemap, Open Graph, comments, live code, the LaTeX build
    "sphinx_sitemap",
    "sphinxext.opengraph",
    "sphinx_comments",
    "sphinx_thebe",
    "sphinx_jupyterbook_latex",
}
"""Extensions the book's configuration loads that have nothing to do with Markdown."""

PlainPage = list[tuple[dict, str | None]]
"""A page's cells, each with its plain Markdown (``None`` for a code cell)."""


class Mismatch(RuntimeError):
    """sphinx-tojupyter's notebook of a page does not line up with the page's cells."""


def is_myst_notebook(path: Path) -> bool:
    """Whether ``path`` is a page written as a MyST notebook, with no ``.ipynb`` of its own
    (``book/how-to-read.md``): its front matter names a kernel, and the build executes it
    from the Markdown. The executed pages' MyST twins have their ``.ipynb`` beside them."""
    head = path.read_text().split("\n---", 1)[0] if path.suffix == ".md" else ""
    return (
        head.startswith("---")
        and "\nkernelspec:" in head
        and not path.with_suffix(".ipynb").exists()
    )


def as_notebook(path: Path, text: str) -> str:
    """``text``, the file at ``path``, as notebook JSON: an ``.ipynb`` as it is, a MyST
    notebook as :func:`casebook.maintainer.tools.pairs.notebook` reads it."""
    from casebook.maintainer.tools import pairs

    return text if path.suffix == ".ipynb" else pairs.notebook(text)


def _inputs(root: Path, texts: Mapping[Path, str]) -> dict[str, str]:
    """``{path under root: text}`` of what Sphinx reads, from ``texts`` where it holds the
    path (a page ``sync`` is about to write, maybe new), else from the file; a MyST
    notebook (:func:`is_myst_notebook`) as the notebook it is, so that it is cut into
    cells as the ``.ipynb`` pages are."""
    out = {}
    for pattern in SOURCES:
        for path in sorted(root.glob(pattern)):
            name, text = path.relative_to(root), path.read_text()
            if is_myst_notebook(path):
                name, text = name.with_suffix(".ipynb"), as_notebook(path, text)
            out[name.as_posix()] = text
        depth = len(PurePosixPath(pattern).parts)
        for path, text in texts.items():
            rel = path.relative_to(root) if path.is_relative_to(root) else None
            if rel is not None and len(rel.parts) == depth and rel.match(pattern):
                out[rel.as_posix()] = text
    return out


def _for_the_tool(text: str) -> str:
    """The notebook with no tags, no outputs and a sentinel code cell after each cell."""
    nb = json.loads(text)
    cells = []
    for cell in nb["cells"]:
        cell = dict(cell, metadata={})
        if cell["cell_type"] == "code":
            cell.update(outputs=[], execution_count=None)
        sentinel = {"cell_type": "code", "metadata": {}, "outputs": [], "source": SENTINEL}
        cells += [cell, dict(sentinel, execution_count=None)]
    for i, cell in enumerate(cells):
        cell["id"] = f"c{i}"
    nb["cells"] = cells
    # one lexer for every page, the one the tool is told makes code cells
    nb["metadata"]["language_info"] = {"name": "python", "pygments_lexer": LEXER}
    return json.dumps(nb)


def _sphinx(src: Path, out: Path, language: str = "en", fresh: bool = True) -> None:
    """Run sphinx-tojupyter's builder (:mod:`._tojupyter`) on ``src`` into ``out``, in
    ``language`` (Sphinx keeps its catalogs per process, so a process renders one language);
    ``fresh=False`` starts from the environment a render left in ``out``."""
    import yaml
    from jupyter_book.config import get_final_config
    from jupyter_book.sphinx import build_sphinx

    from casebook import cases
    from casebook.maintainer.workshop import _tojupyter

    here = {"latex_individualpages": False}
    config, _ = get_final_config(
        user_yaml=src / "_config.yml", cli_config=dict(here), sourcedir=src
    )
    own = yaml.safe_load((src / "_config.yml").read_text())["sphinx"]["local_extensions"]
    extensions = [e for e in config["extensions"] if e not in NOT_HERE and e not in own]
    result = build_sphinx(
        str(src),
        str(out),
        noconfig=True,
        path_config=str(src / "_config.yml"),
        confoverrides={
            **here,
            "extensions": [*extensions, _tojupyter.__name__],
            "nb_execution_mode": "off",
            "tojupyter_drop_solutions": False,
            "tojupyter_lang_synonyms": [LEXER],
            "smartquotes": False,
            "language": language,
            # the book's casebook_eras is not loaded here: its table, for {{ era_KEY.PACKAGE }}
            "myst_substitutions": cases.era_substitutions(),
        },
        builder=_tojupyter.BUILDER,
        freshenv=fresh,
        really_quiet=True,
    )
    if result != 0:
        raise RuntimeError(f"sphinx-tojupyter failed: {result!r}")


def _absolute(markdown: str, page: str) -> str:
    """Every link relative to the page (``#label``, ``../book/x.ipynb#label``) as a link to
    the published book."""
    here = BOOK_URL + page + ".html"

    def link(m: re.Match[str]) -> str:
        target = m.group(1).replace(".ipynb", ".html")
        return f"]({urljoin(here, target)})"

    return re.sub(r"\]\((?!https?:|mailto:)([^)\s]*)\)", link, markdown)


def _pieces(tool: dict, page: dict, name: str) -> PlainPage:
    """The tool's notebook of ``page`` cut at its sentinels: each page cell with its piece,
    or :class:`Mismatch` where the two do not line up."""
    groups: list[list[dict]] = [[]]
    for cell in tool["cells"]:
        if cell["cell_type"] == "code" and "".join(cell["source"]).strip() == SENTINEL:
            groups.append([])
        else:
            groups[-1].append(cell)
    groups.pop()  # what follows the last sentinel: nothing
    if len(groups) != len(page["cells"]):
        raise Mismatch(f"{name}: {len(page['cells'])} cells, the tool's notebook {len(groups)}")
    out: PlainPage = []
    for cell, group in zip(page["cells"], groups, strict=True):
        source = "".join(cell["source"])
        if cell["cell_type"] == "code":
            came = ["".join(c["source"]) for c in group]
            if came != [source.rstrip()] and not (came == [] and not source.strip()):
                raise Mismatch(f"{name}: code cell {source[:80]!r} came back as {came!r}")
            out.append((cell, None))
            continue
        if any(c["cell_type"] != "markdown" for c in group):
            raise Mismatch(f"{name}: a Markdown cell came back with code: {source[:80]!r}")
        text = "\n\n".join("".join(c["source"]).strip("\n") for c in group if c["source"])
        out.append((cell, _absolute(text, name)))
    return out


KEPT = 8
"""Renders kept on disk, the most recently used: the repository's pages, and a few edited
copies of them (a test's, or ``sync``'s pages about to be written)."""


@functools.lru_cache(maxsize=4)  # sync asks twice for one set of inputs
def _kept(inputs: tuple[tuple[str, str], ...], language: str = "en") -> dict[str, PlainPage]:
    """:func:`_render`, kept in the cache folder (``plain/``) by a digest of the inputs, the
    renderer's source (this module and the builder's), the eras' versions and the installed
    packages: every process of a test run, the site build's handouts and ``sync`` render one
    set of pages once, not once each."""
    from casebook import cases
    from casebook.maintainer.workshop import _tojupyter
    from casebook.releases._envs import cache_dir
    from casebook.releases._pool import installed_stamp

    tool = [Path(f).read_text() for f in (__file__, _tojupyter.__file__) if f]
    eras = cases.era_substitutions()  # what {{ era_KEY.PACKAGE }} renders as
    shared = [(name, text) for name, text in inputs if name in SHARED]
    setting = json.dumps([language, tool, eras, BOOK_URL, installed_stamp(sys.executable), shared])
    key = json.dumps([inputs, setting])
    folder = cache_dir() / "plain"
    path = folder / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.json"
    try:
        kept = json.loads(path.read_text())
    except FileNotFoundError:
        pass
    else:
        with contextlib.suppress(FileNotFoundError):  # evicted meanwhile by another process
            path.touch()  # the most recently used
        return {name: [(c, m) for c, m in cells] for name, cells in kept.items()}
    pages = _render(inputs, language, setting)
    storage.write_atomic(path, json.dumps(pages))
    _evict(folder)
    return pages


def _evict(folder: Path) -> None:
    """Remove all but the :data:`KEPT` most recently used renders in ``folder``."""

    def used(path: Path) -> float:
        try:
            return path.stat().st_mtime
        except FileNotFoundError:  # removed meanwhile by another process
            return 0.0

    for old in sorted(folder.glob("*.json"), key=used)[:-KEPT]:
        old.unlink(missing_ok=True)


WORK_FOLDERS = 8
"""Kept work folders of :func:`_render` (14 MB each). A test run uses five: one per test
worker (two on two cores) for the book as it is, one for each of the two cases the tests
scaffold, and the translation's. With fewer, a scaffold's folder evicted the book's, whose
next render started afresh."""


def _diff(src: Path, wanted: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """The sources under ``src`` that ``wanted`` (``{path: text}``) lacks, and those of
    ``wanted`` that ``src`` lacks or holds with another text."""
    have = {p.relative_to(src).as_posix() for p in src.rglob("*") if p.is_file()}
    stale = [
        rel for rel, text in wanted.items() if rel not in have or (src / rel).read_text() != text
    ]
    return sorted(have - wanted.keys()), stale


def _writes(work: Path, wanted: Mapping[str, str]) -> float:
    """How many sources a render in ``work`` would write or remove (infinite for a folder
    no render finished in)."""
    if not (work / "done").exists():
        return float("inf")
    try:
        extra, stale = _diff(work / "src", wanted)
    except OSError:  # written or removed meanwhile by the process that holds it
        return float("inf")
    return len(extra) + len(stale)


@contextlib.contextmanager
def _work_folder(folder: Path, name: str, wanted: Mapping[str, str]) -> Iterator[Path]:
    """``folder/name-SLOT``, held by this process alone: of the slots no other process
    holds, the one whose sources are nearest ``wanted`` (``{path: text}``), so that an edit
    that had every page written again (a title) is not undone, at the same cost, by the
    next render; or the nearest, waited for, when :data:`WORK_FOLDERS` slots are held.
    Then the least recently used folders past :data:`WORK_FOLDERS` that no process holds
    go."""
    import fcntl

    folder.mkdir(parents=True, exist_ok=True)
    slots = sorted(range(WORK_FOLDERS), key=lambda s: _writes(folder / f"{name}-{s}", wanted))
    for slot, wait in [*((slot, False) for slot in slots), (slots[0], True)]:
        lock = open(folder / f"{name}-{slot}.lock", "a")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
            break
        except BlockingIOError:
            lock.close()
    with lock:
        yield folder / f"{name}-{slot}"
    for old in sorted(folder.glob("work-*/"), key=lambda p: p.stat().st_mtime)[:-WORK_FOLDERS]:
        with open(old.with_suffix(".lock"), "a") as other:
            with contextlib.suppress(BlockingIOError):
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
                shutil.rmtree(old, ignore_errors=True)


def _render(
    inputs: tuple[tuple[str, str], ...], language: str = "en", setting: str = ""
) -> dict[str, PlainPage]:
    """Sphinx's plain Markdown of every page in ``inputs`` (``(path, text)`` pairs), rendered
    in a kept work folder of its ``setting`` (the renderer, the stack, the language, the
    configuration, the table of contents and the bibliography: :data:`SHARED`): only the
    sources whose text differs are written, so Sphinx reads and writes again only the pages
    that changed (2-3 s against 8 s for the whole book on 2 cores), and every page when one
    changed what another shows (:func:`._tojupyter.setup`). A failed render leaves its
    folder to start afresh."""
    from casebook.releases._envs import cache_dir

    digest = hashlib.sha256(setting.encode()).hexdigest()[:16]
    texts = {rel: _for_the_tool(t) if rel.endswith(".ipynb") else t for rel, t in inputs}
    with _work_folder(cache_dir() / "plain", f"work-{digest}", texts) as work:
        src, out, done = work / "src", work / "out", work / "done"
        fresh = not done.exists()
        if fresh:
            shutil.rmtree(work, ignore_errors=True)
        done.unlink(missing_ok=True)  # until this render succeeds
        extra, stale = _diff(src, texts)
        for rel in extra:
            (src / rel).unlink()
        for rel in stale:
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            (src / rel).write_text(texts[rel])
        _sphinx(src, out, language, fresh)
        pages = {}
        for rel, text in inputs:
            if rel.endswith(".ipynb"):
                name = rel.removesuffix(".ipynb")
                tool = json.loads((out / rel).read_text())
                pages[name] = _pieces(tool, json.loads(text), name)
        done.touch()  # and the folder's time: the most recently used
        work.touch()
    return pages


def render_book(
    root: Path = ROOT, texts: Mapping[Path, str] | None = None, language: str = "en"
) -> dict[str, PlainPage]:
    """``{page: cells}`` for every executed page of the book in ``root`` (``"notebooks/01-..."``,
    no suffix), read from its file or from ``texts`` (``{path: text}``, what ``sync`` is
    about to write), in ``language`` (another one's Markdown is translated by its catalogs,
    ``locale/``, as the site is). Computed once per set of inputs."""
    inputs = _inputs(root, texts or {})
    if language != "en":
        catalogs = (root / "locale" / language).rglob("*.po")
        inputs |= {p.relative_to(root).as_posix(): p.read_text() for p in catalogs}
    result = _kept(tuple(sorted(inputs.items())), language)
    return copy.deepcopy(result)

"""The workshop: ``python3 -m casebook workshop [--out DIR] [--benchmarks]``.

Writes a student edition and a teacher edition of each case page and of the lessons page
(:mod:`casebook.maintainer.workshop._editions`), in plain Markdown Colab renders
(:mod:`casebook.maintainer.workshop._plain`: sphinx-tojupyter's), into a folder a teacher can zip or push::

    DIR/README.md                   what is where, and how to hand it out
    DIR/student/01-optax-828-....ipynb
    DIR/teacher/01-optax-828-....ipynb

The plan that times them is ``book/teach.md``; its minutes come from running these
editions (:mod:`casebook.maintainer.workshop.timing`, :mod:`casebook.maintainer.workshop.simulate`,
:mod:`casebook.maintainer.workshop.plan`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from casebook import storage
from casebook.maintainer.workshop._editions import EXERCISE_TAG, PAGES, Edition, cut
from casebook.maintainer.workshop._plain import render_book
from casebook.project import BOOK_URL, ROOT

__all__ = [
    "BOOK_URL",
    "DEFAULT_OUT",
    "EXERCISE_TAG",
    "HANDOUTS",
    "handouts",
    "notebook_text",
    "zip_handouts",
    "PAGES",
    "Edition",
    "build",
    "cut",
    "main",
]

DEFAULT_OUT = ROOT / "_build" / "workshop"

_README = """\
# JAX Bug Casebook: workshop editions

Made by `python3 -m casebook workshop`{flags} from the book's pages. The plan, with its
measured minutes, is the book's "Teach from this book" page ({url}book/teach.html).

- `student/`: hand these out. Each is a page's card, story and exercises; each exercise
  is followed by an empty cell, and its statement says what a correct answer prints.
- `teacher/`: the same notebooks with the solutions in place, each checked by the cell
  after it.

To hand them out, push `student/` to a repository and share Colab links
(`https://colab.research.google.com/github/OWNER/REPO/blob/BRANCH/student/NAME.ipynb`),
or zip it (Colab: File > Upload notebook). The first cell of each installs what that
notebook needs; a historical release or an era stack downloads on first use, its size
printed first.

{table}
"""


HANDOUTS = Path("handouts")
"""Where the student editions are committed (``sync`` writes them, so that a Colab link
can open each from the repository), and where the built site holds them and the zips."""


def notebook_text(notebook: dict) -> str:
    """An edition as its file holds it."""
    return json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"


def handouts(
    root: Path = ROOT,
    pages_text: dict[Path, str] | None = None,
    pages: tuple[str, ...] = PAGES,
) -> dict[Path, str]:
    """``{root/handouts/student/NAME.ipynb: text}``: the student edition of each workshop
    page (``pages``), cut from the page as ``pages_text`` holds it (what ``sync`` is about
    to write), or from its file."""
    out = {}
    plain = render_book(root, pages_text)  # every page at once: one run of Sphinx
    for page in pages:
        text = (pages_text or {}).get(root / f"{page}.ipynb")
        notebook = json.loads(text) if text else None
        edition = cut(page, root=root, notebook=notebook, plain=plain[page])
        out[root / HANDOUTS / "student" / f"{edition.name}.ipynb"] = notebook_text(edition.student)
    return out


def zip_handouts(site: Path, root: Path = ROOT, language: str = "en") -> tuple[Path, Path]:
    """Write ``site/handouts/student.zip`` (the committed student editions) and
    ``site/handouts/teacher.zip`` (each page's teacher edition, cut now) into a built site;
    the two paths. The teach page links both. In another ``language`` (its site, such as
    ``_build/html/zh_CN/``), both editions are cut now from the pages rendered in it."""
    import zipfile

    folder = site / HANDOUTS
    folder.mkdir(parents=True, exist_ok=True)
    student, teacher = folder / "student.zip", folder / "teacher.zip"
    plain = render_book(root, language=language) if language != "en" else None
    editions = [
        cut(page, root=root, plain=plain[page] if plain else None, language=language)
        for page in PAGES
    ]
    with zipfile.ZipFile(student, "w", zipfile.ZIP_DEFLATED) as z:
        if plain is None:
            for path in sorted((root / HANDOUTS / "student").glob("*.ipynb")):
                z.write(path, f"student/{path.name}")
        for edition in editions if plain is not None else []:
            z.writestr(f"student/{edition.name}.ipynb", notebook_text(edition.student))
    with zipfile.ZipFile(teacher, "w", zipfile.ZIP_DEFLATED) as z:
        for edition in editions:
            z.writestr(f"teacher/{edition.name}.ipynb", notebook_text(edition.teacher))
    return student, teacher


def _write(path: Path, notebook: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    storage.write_atomic(path, notebook_text(notebook))


def _count(notebook: dict) -> int:
    return sum(c["cell_type"] == "code" for c in notebook["cells"])


def build(out: Path = DEFAULT_OUT, *, benchmarks: bool = False) -> list[Edition]:
    """Write every page's two editions and a README into ``out``; the editions."""
    editions = [cut(page, benchmarks=benchmarks) for page in PAGES]
    rows = ["| notebook | code cells (student) | exercises |", "|---|---|---|"]
    for edition in editions:
        _write(out / "student" / f"{edition.name}.ipynb", edition.student)
        _write(out / "teacher" / f"{edition.name}.ipynb", edition.teacher)
        blanks = sum(
            EXERCISE_TAG in c["metadata"].get("tags", []) for c in edition.student["cells"]
        )
        rows.append(f"| {edition.name} | {_count(edition.student)} | {blanks} |")
    flags = " --benchmarks" if benchmarks else ""
    readme = _README.format(flags=flags, url=BOOK_URL, table="\n".join(rows))
    out.mkdir(parents=True, exist_ok=True)
    storage.write_atomic(out / "README.md", readme)
    return editions


def main(argv: list[str]) -> int:
    """``workshop [--out DIR] [--benchmarks]``; ``--measure`` (time the student editions
    here), ``--colab-sim [--without-jax]`` (time them in simulated Colab runtimes; then
    ``python3 -m casebook sync`` rewrites the plan in ``book/teach.md`` from the figures)."""
    parser = argparse.ArgumentParser(prog="python3 -m casebook workshop")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the folder to write")
    parser.add_argument(
        "--benchmarks",
        action="store_true",
        help="keep the Benchmark sections (left out by default)",
    )
    parser.add_argument("--measure", action="store_true", help="time the student editions here")
    parser.add_argument(
        "--colab-sim", action="store_true", help="time them in simulated Colab runtimes"
    )
    parser.add_argument(
        "--without-jax", action="store_true", help="with --colab-sim: jax not preinstalled"
    )
    args = parser.parse_args(argv)
    if args.measure or args.colab_sim:
        from casebook.maintainer.workshop import simulate

        return (
            1 if (simulate.here() if args.measure else simulate.colab(not args.without_jax)) else 0
        )
    editions = build(args.out, benchmarks=args.benchmarks)
    print(f"casebook workshop: {len(editions)} student and teacher editions in {args.out}")
    return 0

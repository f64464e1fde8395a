"""``python3 -m casebook new KEY --issue URL --title TITLE``: start a new case.

It writes, from the templates in ``casebook/cases/template/``:

* the case folder ``casebook/cases/KEY/``: ``case.toml`` (every field of the case's data,
  each with a comment), ``scripts/wrong.py`` and ``scripts/fix.py`` (the card's code),
  ``scripts/reporter.py`` (the reporter's program, the story's repro) and the module
  ``__init__.py`` (the check set-ups' builders, the only code);
* the notebook ``notebooks/NN-KEY-SLUG.ipynb`` with the anatomy's sections, the repro cell
  the reporter's program goes into (tagged ``reporter``) and the checks that read the
  case's data;
* its entry in ``_toc.yml``, after the last case, and a stub entry for the issue in
  ``book/references.bib``;

then runs ``python3 -m casebook sync``, which writes the card, the tables, the Errors page and
the workshop plan from the new data. What is left to write is marked TODO; CONTRIBUTING.md
says how. Standard library only (sync runs in the venv), so it runs before the environment
exists.
"""

from __future__ import annotations

import argparse
import json
import re
import string
from datetime import date
from pathlib import Path

from casebook.cases import _base, load
from casebook.maintainer.tools import colab
from casebook.project import ROOT

__all__ = ["main", "scaffold"]

TEMPLATES = Path(__file__).resolve().parents[2] / "cases" / "template"


def _slug(title: str, words: int = 5) -> str:
    parts = re.findall(r"[a-z0-9]+", title.lower())
    return "-".join(parts[:words]) or "case"


def _py_str(text: str) -> str:
    """``text`` escaped to sit inside a double-quoted Python string."""
    return json.dumps(text)[1:-1]


def _add_to_toc(toc: Path, docname: str) -> None:
    lines = toc.read_text().splitlines(keepends=True)
    last = max(
        (i for i, line in enumerate(lines) if line.strip().startswith("- file: notebooks/")),
        default=None,
    )
    if last is None:
        raise ValueError(f"{toc}: no case notebook entry to add {docname} after")
    indent = lines[last][: len(lines[last]) - len(lines[last].lstrip())]
    lines.insert(last + 1, f"{indent}- file: {docname}\n")
    toc.write_text("".join(lines))


def _add_bib_stub(bib: Path, key: str, title: str, url: str, label: str, opened: str) -> bool:
    text = bib.read_text()
    if re.search(r"@\w+\{" + re.escape(key) + ",", text):
        return False
    repo = re.sub(r"^https://github\.com/|/(issues|pull)/\d+$", "", url)
    kind = "pull request" if "/pull/" in url else "issue"
    stub = (
        f"\n@misc{{{key},\n  title        = {{{{{title}}}}},\n  author       = {{TODO}},\n"
        f"  year         = {{{opened[:4]}}},\n  howpublished = {{GitHub {kind} {repo}\\#"
        f"{label.split('#')[1]}}},\n  url          = {{{url}}},\n"
        f"  note         = {{Opened {opened}. TODO}}\n}}\n"
    )
    bib.write_text(text.rstrip("\n") + "\n" + stub)
    return True


def scaffold(
    root: Path,
    key: str,
    url: str,
    title: str,
    *,
    opened: str,
    slug: str | None,
    libraries: list[str],
    number: int | None = None,
) -> list[Path]:
    """Write a new case ``key`` into the checkout at ``root``; return the files written.

    ``number`` is the case's place in reading order (its notebook's ``NN``); by default the
    registry's highest number plus one. Give it when another case is being added beside this
    one on a parallel branch, so the two do not both take the next number.
    """
    if not re.fullmatch(r"[a-z][a-z0-9]*-\d+", key):
        raise ValueError(f"KEY must look like optax-1234 (library-issue number), not {key!r}")
    folder = root / "casebook" / "cases" / key.replace("-", "_")
    module = folder / "__init__.py"
    if folder.exists():
        raise ValueError(f"{folder} exists already")
    cases = load(root / "casebook" / "cases")
    taken = {c.number for c in cases}
    if number is None:
        number = max(taken, default=0) + 1
    elif number < 1 or number in taken:
        raise ValueError(f"--number {number} is taken or not positive (taken: {sorted(taken)})")
    docname = f"notebooks/{number:02d}-{key}-{slug or _slug(title)}"
    issue = _base.Issue(url, title, opened, None, bib_key=key.replace("-", ""))
    values = {
        "number": str(number),
        "key": key,
        "label": issue.label,
        "url": url,
        "opened": opened,
        "bib_key": issue.bib_key,
        "docname": docname,
    }

    folder.mkdir(parents=True)
    facts = folder / "case.toml"
    facts.write_text(
        string.Template((TEMPLATES / "case.toml.tmpl").read_text()).substitute(
            values,
            title=_py_str(title),
            libraries=", ".join(f'"{lib}"' for lib in libraries),
        )
    )
    text = (TEMPLATES / "case_module.py.tmpl").read_text()
    module.write_text(string.Template(text).substitute(values, title=_py_str(title)))
    (folder / _base.SCRIPTS).mkdir()
    scripts = [folder / _base.SCRIPTS / f"{name}.py" for name in ("wrong", "fix", "reporter")]
    for script in scripts:
        template = (TEMPLATES / f"{script.stem}.py.tmpl").read_text()
        script.write_text(string.Template(template).substitute(values))

    notebook = json.loads((TEMPLATES / "notebook.ipynb.tmpl").read_text())
    for cell in notebook["cells"]:
        cell["source"] = (
            string.Template("".join(cell["source"]))
            .safe_substitute(values, title=title)
            .splitlines(keepends=True)
        )
    path = root / f"{docname}.ipynb"
    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n")
    config = root / "_config.yml"
    colab.sync(root, config if config.exists() else colab.CONFIG)

    _add_to_toc(root / "_toc.yml", docname)
    written = [facts, module, *scripts, path, root / "_toc.yml"]
    if _add_bib_stub(
        root / "book" / "references.bib", issue.bib_key, title, url, issue.label, opened
    ):
        written.append(root / "book" / "references.bib")
    return written


def main(argv: list[str]) -> int:
    """The ``new`` command; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python3 -m casebook new", description="Start a new case from the template."
    )
    parser.add_argument("key", metavar="KEY", help="library-issue, e.g. optax-1500")
    parser.add_argument("--issue", required=True, help="the upstream issue's URL")
    parser.add_argument("--title", required=True, help="the upstream issue's title")
    parser.add_argument(
        "--opened",
        default=date.today().isoformat(),
        help="the date the issue was opened, YYYY-MM-DD",
    )
    parser.add_argument("--slug", help="the notebook name's tail (default: from the title)")
    parser.add_argument("--libraries", default="optax,jax", help="comma-separated")
    parser.add_argument(
        "--number",
        type=int,
        help="the case's number, NN in its notebook's name (default: the highest plus one); "
        "give it when another case is being added in parallel",
    )
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    parser.add_argument("--no-sync", action="store_true", help=argparse.SUPPRESS)  # tests
    args = parser.parse_args(argv)
    try:
        written = scaffold(
            args.root,
            args.key,
            args.issue,
            args.title,
            opened=args.opened,
            slug=args.slug,
            libraries=args.libraries.split(","),
            number=args.number,
        )
    except ValueError as e:
        print(f"casebook new: {e}")
        return 2
    print("casebook new: wrote\n" + "\n".join(f"  {p}" for p in written))
    if not args.no_sync:
        from casebook.maintainer.tools import environment

        environment.in_venv("casebook.maintainer.sync", ["--root", str(args.root)])
    notebook = next(p for p in written if p.suffix == ".ipynb").relative_to(args.root)
    print(
        "Next (CONTRIBUTING.md, 'Add a case'): fill in case.toml and scripts/, write the "
        f"story in {notebook}, complete the bib entry, run `python3 -m casebook sync`, then "
        f"`python3 -m casebook test tests/ {notebook}`"
    )
    return 0

"""The set-up cell that lets every executed page run in Colab, Binder or any Jupyter.

Each case notebook, the lessons page and the status board start with a set-up code cell
(tagged ``casebook-setup`` and ``remove-cell``, so the HTML hides it). Where ``casebook``
is importable (the test suite, the book build, a clone after ``python3 -m casebook setup``)
it does nothing. Elsewhere it installs ``casebook`` from the repository at the branch the
launch buttons open, with only the extras that page uses (:func:`extras_of`: the
``%%on_release`` magic, the era stacks, equinox, diffrax, the plots), and switches the
releases on demand (``CASEBOOK_ON_DEMAND``, :func:`casebook.releases._envs.on_demand`):
a historical wheel or an era stack is downloaded by the first cell that runs it (an era by
uv, its size printed first), so a page needing no era downloads none. The repository address and branch come from one place,
``_config.yml``; :func:`sync` rewrites the cells from it and ``tests/test_colab.py`` fails
when a cell differs. ``$CASEBOOK_SOURCE`` replaces the address (a ``git+file://`` URL of a
local clone in the Colab simulation, :mod:`casebook.maintainer.tools.colabsim`).

Standard library only.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from casebook.project import ROOT

CONFIG = ROOT / "_config.yml"
#: The executed pages that carry the set-up cell, relative to the repository root.
PAGES = ("notebooks/*.ipynb", "book/*.ipynb")
TAGS = ["casebook-setup", "remove-cell"]

_CELL = """\
# Set-up for Colab, Binder or any Jupyter without the book's package: installs `casebook`
# with what this page uses ({extras}) from the book's repository. Where it was installed so
# (not a clone's editable set-up, as in the test suite), a historical release or an era stack
# is downloaded by the first cell that runs it, its size printed first; this holds after a
# restart of the runtime too. In a clone after `python3 -m casebook setup` it does nothing.
import importlib
import importlib.util
import os
import subprocess
import sys

if importlib.util.find_spec("casebook") is None:
    source = os.environ.get("CASEBOOK_SOURCE", "{source}")
    pip = [sys.executable, "-m", "pip", "install", "-q", f"casebook[{extras}] @ {{source}}"]
    subprocess.run(pip, check=True)
    importlib.invalidate_caches()
if "site-packages" in (importlib.util.find_spec("casebook").origin or ""):
    os.environ["CASEBOOK_ON_DEMAND"] = "1\""""

_REGISTRY = (
    r"casebook\.(?:cases|maintainer\.corpus|status)\b"
    r"|from casebook(?:\.maintainer)? import .*\b(?:cases|corpus|status)\b"
)

#: The extras of ``pyproject.toml`` a page needs, each with what in its code needs it.
EXTRAS: dict[str, re.Pattern[str]] = {
    "history": re.compile(r"%%on_release|casebook\.releases|\bon_release\b"),
    "eras": re.compile(r"\bera:[a-z]"),
    # the registry (casebook.cases) and the survey (casebook.maintainer.corpus) import every case's
    # programs, Equinox models and a diffrax ODE among them
    "equinox": re.compile(r"^\s*(?:import|from) (?:equinox|diffrax)\b|" + _REGISTRY, re.M),
    "diffrax": re.compile(r"^\s*(?:import|from) diffrax\b|" + _REGISTRY, re.M),
    "plots": re.compile(r"^\s*(?:import|from) (?:matplotlib|scipy)\b", re.M),
}


def repository(config: Path = CONFIG) -> tuple[str, str]:
    """``(url, branch)`` of the ``repository:`` block of ``_config.yml``."""
    block = re.search(r"^repository:\n((?:[ \t]+.*\n?)+)", config.read_text(), re.M)
    if not block:
        raise ValueError(f"{config}: no repository: block")
    fields = dict(re.findall(r"^\s+(\w+):\s*(\S+)", block.group(1), re.M))
    return fields["url"], fields.get("branch", "main")


def install_source(config: Path = CONFIG) -> str:
    """The pip URL of ``casebook`` at the branch the book's launch buttons open."""
    url, branch = repository(config)
    return f"git+{url}@{branch}"


def setup_cell_source(config: Path = CONFIG, extras: tuple[str, ...] = tuple(EXTRAS)) -> str:
    """The source of the set-up cell, for the repository of ``config``, installing
    ``casebook`` with ``extras``."""
    return _CELL.format(source=install_source(config), extras=",".join(extras))


def extras_of(cells: list[dict]) -> tuple[str, ...]:
    """The extras a page's code cells (its set-up cell aside) need, in :data:`EXTRAS`'
    order."""
    code = "\n".join(
        "".join(c["source"]) for c in cells if c["cell_type"] == "code" and not _is_setup(c)
    )
    return tuple(name for name, pattern in EXTRAS.items() if pattern.search(code))


def pages(root: Path = ROOT) -> list[Path]:
    """The executed pages (notebooks) that must start with the set-up cell."""
    return sorted(p for pattern in PAGES for p in root.glob(pattern))


def _is_setup(cell: dict) -> bool:
    return cell.get("cell_type") == "code" and TAGS[0] in cell.get("metadata", {}).get("tags", [])


def _cell(source: str) -> dict:
    lines = source.splitlines(keepends=True)
    return {
        "cell_type": "code",
        "execution_count": None,
        "id": TAGS[0],
        "metadata": {"tags": list(TAGS)},
        "outputs": [],
        "source": lines,
    }


def first_code_cell(notebook: Path) -> dict | None:
    cells = json.loads(notebook.read_text())["cells"]
    return next((c for c in cells if c["cell_type"] == "code"), None)


def is_in_sync(notebook: Path, config: Path = CONFIG) -> bool:
    """Whether the notebook's first code cell is today's set-up cell, tagged as such."""
    cells = json.loads(notebook.read_text())["cells"]
    cell = next((c for c in cells if c["cell_type"] == "code"), None)
    return (
        cell is not None
        and _is_setup(cell)
        and cell["metadata"]["tags"][:2] == TAGS
        and "".join(cell["source"]) == setup_cell_source(config, extras_of(cells))
    )


def with_setup_cell(cells: list[dict], config: Path = CONFIG) -> list[dict]:
    """``cells`` with today's set-up cell first among the code cells (an existing set-up
    cell is replaced in place); ``python3 -m casebook sync`` writes the result."""
    cells = [c for c in cells if not _is_setup(c)]
    first_code = next((i for i, c in enumerate(cells) if c["cell_type"] == "code"), len(cells))
    cells.insert(first_code, _cell(setup_cell_source(config, extras_of(cells))))
    return cells


def sync(root: Path = ROOT, config: Path = CONFIG) -> list[Path]:
    """Put today's set-up cell first among the code cells of every page; return the
    pages that changed (the scaffold and the tests; ``casebook sync`` does it all)."""
    changed = []
    for path in pages(root):
        nb = json.loads(path.read_text())
        cells = with_setup_cell(nb["cells"], config)
        if cells != nb["cells"]:
            nb["cells"] = cells
            path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
            changed.append(path)
    return changed

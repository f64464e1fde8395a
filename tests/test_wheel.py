"""The wheel holds the reader's part: every module a page imports, none of the maintainer's.

``pip install casebook`` (and a page's set-up cell in Colab, which installs it from the
repository) must give ``check_optimizer``, ``explain`` and whatever the pages import, and
leave out the commands only a clone can run (``pyproject.toml`` excludes their folders).
The wheel is built here from a copy of the package, offline, and its listing compared
with the modules named by the pages' own import lines and ``%load_ext`` lines, so a page
that starts importing a maintainer's module fails this test, not a reader in Colab.
"""

from __future__ import annotations

import ast
import configparser
import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from casebook import __main__ as cli, releases
from casebook.project import ROOT

PAGES = sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted((ROOT / "book").glob("*.ipynb"))

MAINTAINER = (
    "casebook.maintainer.tools",
    "casebook.maintainer.sync",
    "casebook.maintainer.workshop",
    "casebook.maintainer.corpus",
)
"""The folders a clone alone has: the set-up, test and book commands, sync, the workshop
and the survey."""

_BUILD = "from setuptools import build_meta; print(build_meta.build_wheel({out!r}))"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    """The wheel of this checkout, built offline from a copy of what the wheel is made of
    (so nothing is written into the checkout)."""
    tmp = tmp_path_factory.mktemp("wheel")
    source, out = tmp / "source", tmp / "dist"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    shutil.copytree(ROOT / "casebook", source / "casebook", ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    built = subprocess.run(
        [sys.executable, "-c", _BUILD.format(out=str(out))],
        cwd=source,
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    return zipfile.ZipFile(out / built.stdout.strip().splitlines()[-1])


def modules_of(wheel: zipfile.ZipFile) -> set[str]:
    """The dotted names of the wheel's Python modules (a package by its ``__init__``)."""
    names = set()
    for name in wheel.namelist():
        if name.startswith("casebook/") and name.endswith(".py"):
            names.add(name.removesuffix(".py").removesuffix("/__init__").replace("/", "."))
    return names


def page_imports(page: Path) -> set[str]:
    """The ``casebook`` modules a page's code imports: its ``import`` and ``from ...
    import`` lines (a name imported from a package counts as its module where it is one)
    and the extensions its ``%load_ext`` lines load."""
    lines, found = [], set()
    for cell in json.loads(page.read_text())["cells"]:
        if cell["cell_type"] != "code":
            continue
        for line in "".join(cell["source"]).splitlines():
            ext = re.match(r"\s*%load_ext\s+(casebook\S*)", line)
            found |= {ext.group(1)} if ext else set()
            lines.append("" if re.match(r"\s*[%!]", line) else line)
    for node in ast.walk(ast.parse("\n".join(lines))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("casebook"):
            found.add(node.module or "")
            for alias in node.names:
                dotted = f"{node.module}.{alias.name}"
                path = ROOT / dotted.replace(".", "/")
                found |= {dotted} if path.with_suffix(".py").exists() or path.is_dir() else set()
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("casebook")}
    return found


def _maintainers(module: str) -> bool:
    return any(module == m or module.startswith(f"{m}.") for m in MAINTAINER)


def test_the_pages_imports_are_read():
    """The reader of import lines finds what a page imports (else the next test holds
    vacuously)."""
    found = set().union(*(page_imports(p) for p in PAGES))
    assert {"casebook.check", "casebook.status.stack", "casebook.releases"} <= found
    assert "casebook.cases.optax_1373.reference" in found


def test_the_wheel_ships_every_module_a_page_imports(wheel):
    shipped = modules_of(wheel)
    missing = {
        page.name: sorted(page_imports(page) - shipped)
        for page in PAGES
        if page_imports(page) - shipped
    }
    assert not missing, f"pages import modules the wheel lacks: {missing}"


def test_the_wheel_ships_no_maintainer_module(wheel):
    shipped = modules_of(wheel)
    assert "casebook.check" in shipped and "casebook.explain" in shipped
    assert not sorted(m for m in shipped if _maintainers(m))


def test_no_page_imports_a_maintainer_module():
    used = {page.name: sorted(filter(_maintainers, page_imports(page))) for page in PAGES}
    assert not {k: v for k, v in used.items() if v}, used


def test_the_maintainers_folders_sit_above_everything_the_wheel_ships():
    """The layers of ``.importlinter`` put them (and the dispatch) above ``casebook.status``,
    so no module the wheel ships may import them, even inside a function."""
    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter")
    layers = config["importlinter:contract:folders"]["layers"]
    rows = [{name.strip() for name in row.split("|")} for row in layers.split("\n") if row.strip()]
    status = next(i for i, row in enumerate(rows) if "casebook.status" in row)
    assert set().union(*rows[:status]) == {"casebook.__main__", *MAINTAINER}


def test_a_maintainers_command_from_the_installed_package_says_how_to_get_a_clone(
    monkeypatch, capsys, tmp_path
):
    """As in a wheel: ``casebook.maintainer.tools`` is not installed."""
    real = cli.importlib.util.find_spec

    def find_spec(name: str, *args):
        if _maintainers(name):
            raise ModuleNotFoundError(name=name.rsplit(".", 1)[0])
        return real(name, *args)

    monkeypatch.setattr(cli.importlib.util, "find_spec", find_spec)
    with pytest.raises(SystemExit) as stopped:
        cli.main(["test"])
    assert stopped.value.code == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert "needs a clone" in line and "git clone https://github.com/" in line
    assert cli.COMMANDS["explain"].installed()
    fetched = []  # the reader's setup: the historical wheels
    monkeypatch.setattr(releases, "fetch_command", lambda args: fetched.append(args))
    cli.main(["setup"])
    assert fetched == [[]]

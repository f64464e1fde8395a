"""Pages use the package's public API only.

A page is read by people who will copy its imports, so every ``casebook`` name it uses must
be one the package promises to keep: no private module (``casebook.releases._runner``), no
private name (``optax_1373._adamw``), and only names a package lists in ``__all__``. The
API page (``book/api.md``) documents exactly those names.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from casebook.project import ROOT

PAGES = sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted((ROOT / "book").glob("*.ipynb"))


def page_code(page: Path) -> str:
    """The Python of a page's code cells: magics and shell lines blanked, the bodies of
    ``%%`` cells kept (an ``%%on_release`` body is code a reader runs too)."""
    lines = []
    for cell in json.loads(page.read_text())["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        for line in source.splitlines():
            lines.append("" if re.match(r"\s*[%!]", line) else line)
        lines.append("")
    return "\n".join(lines)


def casebook_uses(code: str) -> tuple[set[str], list[str]]:
    """``(names, private)``: every ``casebook`` name the code imports or reaches as an
    attribute of an imported one (``releases.run``), and the private ones among them."""
    tree = ast.parse(code)
    bound: dict[str, str] = {}  # local name -> dotted casebook path
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("casebook"):
            for alias in node.names:
                path = f"{node.module}.{alias.name}"
                bound[alias.asname or alias.name] = path
                names.add(path)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("casebook"):
                    bound[alias.asname or alias.name.split(".")[0]] = alias.name
                    names.add(alias.name)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in bound
        ):
            names.add(f"{bound[node.value.id]}.{node.attr}")
    private = sorted(
        n for n in names if any(p.startswith("_") and not p.startswith("__") for p in n.split("."))
    )
    return names, private


def _is_public(path: str) -> bool:
    """Whether a dotted path is a public module, or a name in its module's ``__all__``."""
    try:
        importlib.import_module(path)
        return True
    except ImportError:
        pass
    module, _, name = path.rpartition(".")
    try:
        owner = importlib.import_module(module)
    except ImportError:
        return False
    exported = getattr(owner, "__all__", None)
    if exported is None:  # a case folder's registry module: its public names
        return hasattr(owner, name) and not name.startswith("_")
    return name in exported


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_a_page_uses_no_private_name(page):
    _, private = casebook_uses(page_code(page))
    assert not private, f"{page.name} uses private casebook names: {private}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_a_page_uses_only_exported_names(page):
    names, _ = casebook_uses(page_code(page))
    unlisted = sorted(n for n in names if not _is_public(n))
    assert not unlisted, f"{page.name} uses names no __all__ lists: {unlisted}"


def test_the_checker_finds_private_names():
    code = "from casebook.releases import _runner\nfrom casebook.cases import optax_1373\noptax_1373._adamw\n"
    _, private = casebook_uses(code)
    assert private == ["casebook.cases.optax_1373._adamw", "casebook.releases._runner"]


API_PAGE = ROOT / "book" / "api.md"


def api_modules() -> list[str]:
    """The packages the API page documents: one ``automodule`` directive each."""
    return re.findall(r"^\.\. automodule:: (\S+)$", API_PAGE.read_text(), re.M)


@pytest.fixture(scope="module")
def api_build(tmp_path_factory) -> tuple[set[str], list[str]]:
    """``book/api.md`` built alone by Sphinx (nitpicky, as the book builds it) with the
    book's autodoc and napoleon settings, in a process of its own (Sphinx leaves docutils'
    registries changed): the Python objects it documents, and its warnings but those about
    the other pages it links to, and each "Type:" field of its text. Napoleon reads the first
    line of a constant's or property's docstring as ``type: description`` when it holds a
    colon; the book's docstrings give no types, so each such field is prose misread."""
    import yaml

    sphinx = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]
    src = tmp_path_factory.mktemp("api")
    (src / "api.md").write_text(API_PAGE.read_text())
    config = {k: v for k, v in sphinx["config"].items() if k.startswith(("autodoc", "napoleon"))}
    config |= {
        "extensions": ["myst_parser", *(e for e in sphinx["extra_extensions"] if "ext." in e)],
        "root_doc": "api",
        "nitpicky": True,
    }
    (src / "conf.py").write_text("".join(f"{k} = {v!r}\n" for k, v in config.items()))
    build = (
        "import json, sys\nfrom sphinx.application import Sphinx\n"
        f"app = Sphinx({str(src)!r}, {str(src)!r}, {str(src / '_out')!r}, "
        f"{str(src / '_doctrees')!r}, 'text', status=None, warning=sys.stderr)\n"
        "app.build()\nprint(json.dumps(sorted(app.env.get_domain('py').objects)))\n"
    )
    run = subprocess.run([sys.executable, "-c", build], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    text = re.sub(r"\x1b\[[0-9;]*m", "", run.stderr)  # no colours
    lines = [w for w in text.splitlines() if "unknown document" not in w]
    page = (src / "_out" / "api.txt").read_text().splitlines()
    typed = [
        " ".join(page[i - 2 : i + 2]) for i, line in enumerate(page) if line.strip() == "Type:"
    ]
    warned = [w for w in lines if "WARNING" in w or "ERROR" in w]
    return set(json.loads(run.stdout)), warned + typed


def test_the_api_page_documents_every_name_of_each_package_s_all(api_build):
    """Each package on the page is ``automodule`` over its ``__all__``: a name autodoc
    cannot document (a function without a docstring, a constant imported from another
    module without a docstring bound where it is exported) is missing from the page."""
    objects, _ = api_build
    missing = [
        f"{module}.{name}"
        for module in api_modules()
        for name in importlib.import_module(module).__all__
        if f"{module}.{name}" not in objects
    ]
    assert not missing, f"book/api.md does not document {missing}"


def test_the_api_page_builds_without_warnings(api_build):
    _, warnings = api_build
    assert not warnings, "\n".join(warnings)


def test_every_module_a_page_imports_has_a_section_on_the_api_page():
    documented = set(api_modules())
    for page in PAGES:
        names, _ = casebook_uses(page_code(page))
        for name in names:
            module = name
            while module not in documented and "." in module:
                module = module.rpartition(".")[0]
            owner = module if module in documented else None
            if name.startswith("casebook.cases."):  # a case's own set-ups and programs
                continue
            assert owner, f"{page.name} uses {name}, from no module the API page documents"

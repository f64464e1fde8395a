"""A page's record: its green run's outputs in the build's cache and the digest of what
the run read. Each input invalidates it; nothing else does; the build and the test command
read the one record."""

from __future__ import annotations

import types
from pathlib import Path

import pytest

from casebook.maintainer.tools import buildcache
from casebook.project import ROOT

READS_PAGES = False

PAGE = "notebooks/01-optax-828-a-page.ipynb"

FILES = {
    "casebook/__init__.py": "",
    "casebook/cases/__init__.py": "",
    "casebook/cases/optax_828/__init__.py": "",
    "casebook/cases/optax_828/case.toml": "",
    "casebook/cases/optax_828/era.txt": "",
    "casebook/cases/optax_828/scripts/fix.py": "print(1)\n",
    "casebook/cases/optax_969/__init__.py": "",
    "casebook/cases/optax_969/scripts/fix.py": "print(2)\n",
    "casebook/bench/__init__.py": "from casebook.bench import _timing\n",
    "casebook/bench/_timing.py": "def f():\n    from ..releases import program\n",
    "casebook/releases/__init__.py": "",
    "casebook/releases/program.py": "CHILD = 'casebook.releases.child'\n",
    "casebook/releases/child.py": "",
    "casebook/releases/manifest.toml": "",
    "casebook/trace/__init__.py": "",
    "book/measurements/runs/a.json": "{}",
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    import nbformat

    for name, text in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# A page"),
        nbformat.v4.new_code_cell("from casebook import bench\nprint(6 * 7)"),
    ]
    (tmp_path / "notebooks").mkdir()
    nbformat.write(nb, tmp_path / PAGE)
    return tmp_path


def _recorded(repo: Path) -> bool:
    return buildcache.green_record(repo, repo / PAGE) is not None


def _store(repo: Path) -> None:
    import nbformat

    assert buildcache.store_executed(repo, repo / PAGE, nbformat.read(repo / PAGE, as_version=4))


def test_a_page_imports_what_its_modules_import_and_name():
    """The closure follows imports inside functions, relative ones and a module named in a
    string; it leaves out what no page module imports."""
    files = buildcache.imported_modules(ROOT, "from casebook import cases, releases")
    names = {p.relative_to(ROOT).as_posix() for p in files}
    assert {"casebook/releases/_child.py", "casebook/cases/optax_969/__init__.py"} <= names
    assert not any(
        n.startswith(("casebook/maintainer/tools/", "casebook/maintainer/sync/")) for n in names
    )


@pytest.mark.parametrize(
    "path",
    [
        PAGE,  # the page itself, any cell
        "casebook/bench/__init__.py",  # a module it imports
        "casebook/releases/child.py",  # ...and one that module names, two imports away
        "casebook/cases/optax_828/scripts/fix.py",  # its case folder
        "casebook/cases/optax_969/__init__.py",  # the registry of every case
        "casebook/releases/manifest.toml",
        "book/measurements/runs/a.json",
    ],
)
def test_each_input_invalidates_the_record(repo, path):
    _store(repo)
    assert _recorded(repo)
    (repo / path).write_bytes((repo / path).read_bytes() + b"\n")
    assert not _recorded(repo)
    assert buildcache.invalidate_if_stale(repo) == [PAGE]
    assert buildcache.invalidate_if_stale(repo) == []


@pytest.mark.parametrize(
    "path", ["casebook/trace/__init__.py", "casebook/cases/optax_969/scripts/fix.py"]
)
def test_what_the_page_does_not_read_keeps_it(repo, path):
    _store(repo)
    (repo / path).write_text("changed = True\n")
    assert _recorded(repo) and buildcache.invalidate_if_stale(repo) == []


def test_another_stack_invalidates_the_record(repo, monkeypatch):
    _store(repo)
    monkeypatch.setattr(buildcache, "stack", lambda: "3.13.1\njax==0.13.0")
    assert not _recorded(repo)


def test_a_fresh_run_ignores_the_record(repo, monkeypatch):
    _store(repo)
    ran = []
    passed = lambda: ran.append(1) or types.SimpleNamespace(error=None, nb=None)  # noqa: E731
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv(buildcache.FRESH_ENV, raising=False)  # `casebook test --fresh` sets it
    assert buildcache.run_or_take_record(repo, repo / PAGE, passed)[1] is not None
    for variable, value in [(buildcache.FRESH_ENV, "1"), ("CI", "true")]:
        monkeypatch.setenv(variable, value)
        monkeypatch.setattr(buildcache, "store_executed", lambda *a: True)
        assert buildcache.run_or_take_record(repo, repo / PAGE, passed)[1] is None
        monkeypatch.delenv(variable)
    assert len(ran) == 2


def test_a_failed_or_interrupted_run_records_nothing(repo, monkeypatch):
    import nbformat

    nb = nbformat.read(repo / PAGE, as_version=4)
    failed = lambda: types.SimpleNamespace(error="ZeroDivisionError", nb=nb)  # noqa: E731
    buildcache.run_or_take_record(repo, repo / PAGE, failed)
    assert not _recorded(repo)

    def interrupted() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        buildcache.run_or_take_record(repo, repo / PAGE, interrupted)
    assert not _recorded(repo)
    passed = lambda: types.SimpleNamespace(error=None, nb=nb)  # noqa: E731
    assert buildcache.run_or_take_record(repo, repo / PAGE, passed)[1] is None
    assert _recorded(repo)


def test_a_text_page_the_build_executed_gets_no_record(repo, monkeypatch):
    """How to read is MyST Markdown with code cells: the build executes and caches it, and
    recording it after the build read it as a notebook and crashed (.ci/run's book step)."""
    text = repo / "book" / "how-to-read.md"
    text.parent.mkdir(exist_ok=True)
    text.write_text("---\njupytext:\n  text_representation:\n    extension: .md\n---\n# Text\n")
    listed = types.SimpleNamespace(
        list_cache_records=lambda: [types.SimpleNamespace(uri=str(text))]
    )
    monkeypatch.setattr(buildcache, "_cache", lambda build: listed)
    buildcache.record_built(repo)
    records = repo / "_build" / ".casebook-records.json"
    assert not records.exists() or "how-to-read" not in records.read_text()


def test_the_build_rereads_every_page_after_a_record_changed(repo):
    """Sphinx re-reads a page only when its source changes: a page stored anew by the tests
    drops the parsed pages, so the build shows its new outputs; a build with nothing new
    keeps them."""
    build = repo / "_build"
    _store(repo)
    buildcache.record_built(repo)
    for name in buildcache.CACHES[1:]:
        (build / name).mkdir()
    assert buildcache.invalidate_if_stale(repo) == []
    assert all((build / name).exists() for name in buildcache.CACHES[1:])
    (repo / "casebook" / "bench" / "_timing.py").write_text("RATIO = 2\n")
    _store(repo)  # the tests ran it again
    assert buildcache.invalidate_if_stale(repo) == []
    assert not any((build / name).exists() for name in buildcache.CACHES[1:])


def _page(tmp: Path) -> Path:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [
        nbformat.v4.new_markdown_cell("# A page"),
        nbformat.v4.new_code_cell("print(6 * 7)"),
    ]
    path = tmp / "page.ipynb"
    nbformat.write(nb, path)
    return path


def test_a_page_the_tests_ran_is_found_by_the_build(repo, tmp_path):
    """What the test command stores is what the build looks up: the page as on disk, with
    the run's outputs, and without the runner's timing metadata in its key."""
    import nbformat
    from jupyter_cache import get_cache
    from nbclient import NotebookClient

    page = _page(tmp_path)
    executed = nbformat.read(page, as_version=4)
    NotebookClient(executed, kernel_name="python3", record_timing=True).execute()
    assert buildcache.store_executed(repo, page, executed, repo / "_build")
    cache = get_cache(str(repo / "_build" / buildcache.JUPYTER_CACHE))
    _, merged = cache.merge_match_into_notebook(nbformat.read(page, as_version=4))
    assert merged.cells[1].outputs[0]["text"] == "42\n"
    other = nbformat.read(page, as_version=4)
    other.cells[1].source = "print(0)"
    assert not buildcache.store_executed(repo, page, other, repo / "_build")
    second = tmp_path / "second.ipynb"
    nbformat.write(other, second)
    assert buildcache.store_executed(repo, second, other, repo / "_build")
    assert len(cache.list_cache_records()) == 2
    nbformat.write(other, page)  # the page's code changes: its record of the old code goes
    assert buildcache.store_executed(repo, page, other, repo / "_build")
    with pytest.raises(KeyError):
        cache.match_cache_notebook(executed)


def test_the_build_runs_the_pages_the_cache_lacks_and_stores_them(repo, tmp_path, capfd):
    """``casebook book`` first runs, in parallel (jupyter-cache's executor), each page the
    cache has no outputs for, and records the digest of its inputs; a page already stored
    is not run again, and a failing one is reported and left out. What a kernel writes to
    its file descriptor 2 (XLA's C++ logs) stays out of the command's output."""
    import nbformat

    from casebook.maintainer.tools import buildcache, prebuild

    (repo / PAGE).unlink()
    page = _page(repo / "notebooks")
    assert prebuild.missing(repo) == [page]
    assert prebuild.execute_missing(repo) == ([str(page)], {})
    assert prebuild.missing(repo) == []
    assert buildcache.green_record(repo, page)  # stored, with today's inputs
    assert prebuild.execute_missing(repo) == ([], {})
    nb = nbformat.read(page, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("import os; os.write(2, b'XLA SAYS HELLO')"))
    nb.cells.append(nbformat.v4.new_code_cell("1 / 0"))
    nbformat.write(nb, page)
    capfd.readouterr()
    passed, failed = prebuild.execute_missing(repo)
    assert passed == [] and "ZeroDivisionError" in failed[str(page)]
    assert prebuild.missing(repo) == [page]
    assert "XLA SAYS HELLO" not in capfd.readouterr().err

"""A change to casebook/, the manifest or the lock invalidates the executed-notebook cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from casebook.project import ROOT
from casebook.tools import buildcache


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    for folder in ("casebook/bench", "casebook/releases", "casebook/cases/optax_828"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "casebook" / "bench" / "__init__.py").write_text("RATIO = 1\n")
    (tmp_path / "casebook" / "releases" / "manifest.toml").write_text("")
    (tmp_path / "casebook" / "cases" / "optax_828" / "case.toml").write_text("")
    (tmp_path / "casebook" / "cases" / "optax_828" / "era.txt").write_text("")
    (tmp_path / "requirements.txt").write_text("jax==0.12.0.1\n")
    (tmp_path / "pyproject.toml").write_text("")
    return tmp_path


def _fill(build: Path) -> None:
    for name in buildcache.CACHES:
        (build / name).mkdir(parents=True, exist_ok=True)
        (build / name / "executed").write_text("old output")


def _cached(build: Path) -> bool:
    return all((build / name / "executed").exists() for name in buildcache.CACHES)


def test_unchanged_inputs_keep_the_cache(repo):
    build = repo / "_build"
    buildcache.invalidate_if_stale(repo)
    _fill(build)
    assert buildcache.invalidate_if_stale(repo) is False and _cached(build)


@pytest.mark.parametrize(
    "path",
    [
        "casebook/bench/__init__.py",
        "casebook/new_module.py",
        "casebook/releases/manifest.toml",
        "casebook/cases/optax_828/case.toml",
        "casebook/cases/optax_828/era.txt",
        "requirements.txt",
        "pyproject.toml",
    ],
)
def test_a_changed_input_drops_every_executed_output(repo, path):
    build = repo / "_build"
    buildcache.invalidate_if_stale(repo)
    _fill(build)
    (repo / path).write_text("RATIO = 2\n")
    assert buildcache.invalidate_if_stale(repo) is True
    assert not any((build / name).exists() for name in buildcache.CACHES)
    _fill(build)
    assert buildcache.invalidate_if_stale(repo) is False and _cached(build)


def test_a_cache_without_a_stamp_is_not_trusted(repo):
    _fill(repo / "_build")
    buildcache.invalidate_if_stale(repo)
    assert not _cached(repo / "_build")


def test_the_real_book_inputs_are_the_package_the_manifest_and_the_lock():
    root = ROOT
    inputs = {
        p.relative_to(root).as_posix() for pattern in buildcache.INPUTS for p in root.glob(pattern)
    }
    assert {
        "casebook/tools/buildcache.py",
        "casebook/releases/manifest.toml",
        "casebook/cases/optax_828/case.toml",
        "casebook/cases/optax_828/era.txt",
        "requirements.txt",
    } <= inputs
    assert any(name.startswith("book/measurements/runs/") for name in inputs)


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
    (repo / "casebook" / "x.py").write_text("changed = True\n")  # an input changes
    assert buildcache.store_executed(repo, page, executed, repo / "_build")
    assert len(get_cache(str(repo / "_build" / buildcache.JUPYTER_CACHE)).list_cache_records()) == 1


def test_the_build_runs_the_pages_the_cache_lacks_and_stores_them(repo, tmp_path):
    """``casebook book`` first runs, in parallel, each page the cache has no outputs for;
    a page already stored is not run again."""
    from casebook.tools import prebuild

    (repo / "notebooks").mkdir()
    page = _page(repo / "notebooks")
    assert prebuild.missing(repo) == [page]
    (result,) = prebuild.execute_missing(repo, workers=1)
    assert result[:2] == ("page.ipynb", True)
    assert prebuild.missing(repo) == []
    assert prebuild.execute_missing(repo, workers=1) == []

"""Every executed page starts with the set-up cell, built from _config.yml alone."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from casebook.maintainer.tools import colab

PAGES = colab.pages()


def test_the_repository_comes_from_the_config():
    url, branch = colab.repository()
    assert url.startswith("https://github.com/") and branch
    assert f'"git+{url}@{branch}"' in colab.setup_cell_source()


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_each_page_starts_with_todays_set_up_cell_hidden_in_the_html(page):
    assert colab.is_in_sync(page), f"run `python3 -m casebook sync` ({page.name})"
    cell = colab.first_code_cell(page)
    assert "remove-cell" in cell["metadata"]["tags"]


def test_the_cell_follows_the_config_and_sync_is_idempotent(tmp_path):
    (tmp_path / "notebooks").mkdir()
    page = tmp_path / "notebooks" / "x.ipynb"
    shutil.copy(PAGES[0], page)
    config = tmp_path / "_config.yml"
    config.write_text("title: t\nrepository:\n  url: https://github.com/me/fork\n  branch: dev\n")
    assert not colab.is_in_sync(page, config)
    assert colab.sync(tmp_path, config) == [page]
    assert colab.is_in_sync(page, config) and colab.sync(tmp_path, config) == []
    cells = json.loads(page.read_text())["cells"]
    assert sum(colab._is_setup(c) for c in cells) == 1
    assert "git+https://github.com/me/fork@dev" in "".join(colab.first_code_cell(page)["source"])


def test_the_cell_does_nothing_where_casebook_is_importable():
    namespace: dict = {}
    exec(colab.setup_cell_source(), namespace)  # would pip install if it were missing
    assert "source" not in namespace


def test_downloads_on_demand_where_casebook_was_pip_installed_not_in_a_clone(monkeypatch):
    """In the test suite (an editable install in the clone) the set-up cell leaves downloads
    off; where casebook sits in site-packages (Colab, also after a runtime restart, when the
    install is skipped) it turns them on."""
    import importlib.util
    import types

    monkeypatch.setenv("CASEBOOK_ON_DEMAND", "0")  # restored (removed) after the test
    exec(colab.setup_cell_source(), {})
    assert os.environ["CASEBOOK_ON_DEMAND"] == "0"
    installed = types.SimpleNamespace(origin="/usr/lib/python3/site-packages/casebook/__init__.py")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: installed)
    exec(colab.setup_cell_source(), {})
    assert os.environ["CASEBOOK_ON_DEMAND"] == "1"


def test_the_simulation_runs_the_first_page_alone_then_two_at_a_time(tmp_path, monkeypatch, capsys):
    """The first page's set-up cell installs casebook for the others, so it runs alone; the
    rest run two at a time, and their lines come in page order with the failures counted."""
    import threading
    import time

    from casebook.maintainer.tools import colabsim

    running, seen, lock = set(), [], threading.Lock()

    def page_run(copy, out, python, env):
        with lock:
            running.add(copy.name)
            seen.append(set(running))
        time.sleep(0.2)
        with lock:
            running.discard(copy.name)
        return {"passed": copy.name != "lessons.ipynb"}, "its tail", 0.2

    class Pip:
        stdout = "[]"

    monkeypatch.setattr(colabsim.executor, "in_subprocess", page_run)
    monkeypatch.setattr(colabsim.subprocess, "run", lambda *a, **k: Pip())
    pages = list(colabsim.DEFAULT_PAGES)
    assert colabsim._run_pages(pages, tmp_path / "py", tmp_path, {}) == 1
    first = "01-optax-828-zero-nans-multisteps.ipynb"
    assert seen[0] == {first} and all(s == {first} for s in seen if first in s)
    assert max(map(len, seen)) == 2
    lines = [line for line in capsys.readouterr().out.splitlines() if " (0 s)" in line]
    assert [line.split()[2] for line in lines] == pages
    assert lines[-1].startswith("colab-sim: FAIL book/lessons.ipynb")

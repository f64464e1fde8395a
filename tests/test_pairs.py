"""Each executed page has a MyST twin (written by ``sync``), and the build reads only the notebook."""

from __future__ import annotations

import json
import re

import pytest
from test_cases import _copy

from casebook.maintainer import sync
from casebook.maintainer.tools import colab, pairs

PAGES = colab.pages()


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_each_page_has_its_myst_twin_in_sync(page):
    assert pairs.myst(page.read_text()) == pairs.twin(page).read_text(), (
        f"{pairs.twin(page).name} is stale: run `python3 -m casebook sync`"
    )


def test_the_build_excludes_the_twins():
    config = (colab.ROOT / "_config.yml").read_text()
    excluded = re.search(r"^exclude_patterns: \[(.*)\]", config, re.M).group(1)
    assert '"notebooks/*.md"' in excluded and '"book/*.md"' not in excluded
    for page in PAGES:
        if page.parent.name == "book":
            assert f'"book/{page.stem}.md"' in excluded


def test_a_twin_is_the_notebook_as_myst():
    """``sync`` writes each twin as :func:`pairs.myst` gives it (tests/test_sync.py checks
    that none is stale); a change to the notebook changes it."""
    text = PAGES[0].read_text()
    assert pairs.myst(text) == pairs.twin(PAGES[0]).read_text()
    assert pairs.myst(text.replace("optax", "optaks", 1)) != pairs.twin(PAGES[0]).read_text()


def test_a_changed_notebook_makes_its_twin_stale_until_synced(tmp_path):
    root = _copy(tmp_path)
    page = root / PAGES[0].relative_to(colab.ROOT)
    assert pairs.twin(page) not in sync.stale(root)
    # A sentence added to the last cell, not a word of the title: a title another page shows
    # has the plain render (and the next test's, which undoes it) write every page again.
    notebook = json.loads(page.read_text())
    notebook["cells"][-1]["source"][-1] += " One more sentence."
    page.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n")
    assert pairs.twin(page) in sync.stale(root)
    assert pairs.twin(page) in sync.sync(root)
    assert pairs.myst(page.read_text()) == pairs.twin(page).read_text()

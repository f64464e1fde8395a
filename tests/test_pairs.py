"""Each executed page has an up-to-date MyST twin, and the build reads only the notebook."""

from __future__ import annotations

import re
import shutil

import pytest

from casebook.tools import colab, pairs

PAGES = colab.pages()


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_each_page_has_its_myst_twin_in_sync(page):
    assert pairs.in_sync(page), f"{pairs.twin(page).name} is stale: run `python3 -m casebook sync`"


def test_the_build_excludes_the_twins():
    config = (colab.ROOT / "_config.yml").read_text()
    excluded = re.search(r"^exclude_patterns: \[(.*)\]", config, re.M).group(1)
    assert '"notebooks/*.md"' in excluded and '"book/*.md"' not in excluded
    for page in PAGES:
        if page.parent.name == "book":
            assert f'"book/{page.stem}.md"' in excluded


def test_a_changed_notebook_makes_its_twin_stale_until_synced(tmp_path):
    (tmp_path / "notebooks").mkdir()
    page = tmp_path / "notebooks" / PAGES[0].name
    shutil.copy(PAGES[0], page)
    shutil.copy(pairs.twin(PAGES[0]), pairs.twin(page))
    assert pairs.in_sync(page)
    page.write_text(page.read_text().replace("optax", "optaks", 1))
    assert not pairs.in_sync(page)
    assert pairs.twin(page) in pairs.sync(tmp_path) and pairs.in_sync(page)

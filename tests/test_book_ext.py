"""The book's own Sphinx extensions (``book/_ext/``), as functions."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _extension(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "book" / "_ext" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MAGIC = _extension("casebook_magic")


def test_a_magic_line_becomes_a_label_and_leaves_the_code():
    cell = '%%on_release optax==0.1.9 --raises TypeError --match "a b" --as repro\nimport jax\n'
    assert MAGIC.visible(cell) == ("ran on optax 0.1.9 · raises TypeError", "import jax")
    assert MAGIC.label("%%on_release era:optax-828 --ok") == (
        "ran in the reporter's stack (era:optax-828) · runs cleanly"
    )
    assert MAGIC.label("%%on_release current --x64 --raises ValueError").endswith("64-bit")
    assert MAGIC.label("%%on_release fix_c --ok").startswith("ran on fix_c (a patched")


def test_the_magic_s_extension_line_is_left_out_and_other_code_kept():
    assert MAGIC.visible("import jax\n\n%load_ext casebook.releases\n") == (None, "import jax")
    assert MAGIC.visible("x = 1  # %%on_release is only text here") == (
        None,
        "x = 1  # %%on_release is only text here",
    )


def test_the_launch_buttons_open_the_page_s_plain_twin(tmp_path):
    """A tiny book on sphinx-book-theme with the launch buttons: after the build, the Colab
    and Binder buttons of a notebook page open ``handouts/pages/NAME.ipynb`` on the same
    repository and branch, and that file is there; so do a MyST notebook page's, where it
    has a twin; one without a twin keeps only Binder's."""
    import re

    from sphinx.application import Sphinx

    notebook = (
        '{"cells": [{"cell_type": "markdown", "id": "a", "metadata": {}, "source": "# Page"}],'
    )
    notebook += ' "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'
    (tmp_path / "page.ipynb").write_text(notebook)
    (tmp_path / "story.md").write_text(
        "---\njupytext:\n  text_representation:\n    format_name: myst\nkernelspec:\n"
        "  name: python3\n  display_name: Python 3\n---\n# Story\n\n"
        "```{code-cell} python\n1 + 1\n```\n\n```{toctree}\n:hidden:\npage\nprimer\n```\n"
    )
    (tmp_path / "primer.md").write_text(
        (tmp_path / "story.md").read_text().split("```{toctree}")[0]
    )
    (tmp_path / "handouts" / "pages").mkdir(parents=True)
    (tmp_path / "handouts" / "pages" / "page.ipynb").write_text(notebook)
    (tmp_path / "handouts" / "pages" / "primer.ipynb").write_text(notebook)
    (tmp_path / "conf.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT / 'book' / '_ext')!r})\n"
        "extensions = ['myst_nb', 'casebook_launch']\n"
        "html_theme = 'sphinx_book_theme'\n"
        "exclude_patterns = ['handouts', '_build']\n"
        "nb_execution_mode = 'off'\nroot_doc = 'page'\n"
        "html_theme_options = {'repository_url': 'https://github.com/o/r', 'repository_branch': 'b',\n"
        "    'launch_buttons': {'colab_url': 'https://colab.research.google.com',\n"
        "                       'binderhub_url': 'https://mybinder.org'}}\n"
    )
    out = tmp_path / "_build"
    app = Sphinx(tmp_path, tmp_path, out, out / ".doctrees", "html", status=None, warning=None)
    app.build()
    html = (out / "page.html").read_text()
    colab = re.findall(r'href="(https://colab\.research\.google\.com/[^"]+)"', html)
    assert colab == [
        "https://colab.research.google.com/github/o/r/blob/b/handouts/pages/page.ipynb"
    ]
    assert (tmp_path / colab[0].split("/blob/b/")[1]).exists()
    binder = re.findall(r'href="(https://mybinder\.org/[^"]+)"', html)
    assert binder == ["https://mybinder.org/v2/gh/o/r/b?urlpath=tree/handouts/pages/page.ipynb"]
    # a MyST page has no twin and no Colab button (Colab cannot open a .md), but Binder's
    story = (out / "story.html").read_text()
    assert "colab.research.google.com" not in story
    assert "mybinder.org/v2/gh/o/r/b?urlpath=tree/story.md" in story
    # a MyST page with a twin: both buttons open it
    primer = (out / "primer.html").read_text()
    assert "colab.research.google.com/github/o/r/blob/b/handouts/pages/primer.ipynb" in primer
    assert "mybinder.org/v2/gh/o/r/b?urlpath=tree/handouts/pages/primer.ipynb" in primer

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

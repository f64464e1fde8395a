"""The program code a page shows in its text is the program's code (``casebook.maintainer.sync._blocks``)."""

from __future__ import annotations

import json

import pytest
from test_public_api import PAGES

from casebook.maintainer.sync import _blocks


def _markdown(page) -> str:
    cells = json.loads(page.read_text())["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_program_block_shows_the_program_as_it_is(page):
    for arguments, body in _blocks.blocks_in(_markdown(page)):
        assert body == _blocks.expected(arguments), (
            f"{page.name}: the block {arguments} is stale; run `python3 -m casebook sync`"
        )


def test_a_stale_block_is_found_and_rewritten():
    text = '<!-- program: ["optax_828.doors", "disable_jit"] -->\n```python\nold\n```\n'
    ((arguments, body),) = _blocks.blocks_in(text)
    assert body == "old\n" != _blocks.expected(arguments)
    fresh = _blocks.rewrite(text)
    assert _blocks.blocks_in(fresh)[0][1] == _blocks.expected(arguments)
    assert '@variant("disable_jit")' in fresh

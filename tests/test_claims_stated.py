"""Every benchmark claim on a page states its own interval, and bounds something.

``casebook.bench.claims.check_interval`` refuses such a claim when the page runs; this
test reads every ``.claim(...)`` call of every page without running it, so a widened
interval or a sentence that no longer states its bounds fails at once.
"""

from __future__ import annotations

import ast
import math

import pytest
from test_public_api import PAGES, page_code

from casebook.bench.claims import check_interval


def page_claims(code: str) -> list[tuple[float, float, str]]:
    """``(at_least, at_most, says)`` of each ``.claim(...)`` call whose arguments are
    literals (an f-string's literal parts stand for its text)."""
    found = []
    for node in ast.walk(ast.parse(code)):
        if not (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "claim"):
            continue
        kw = {k.arg: k.value for k in node.keywords}
        says = kw.get("says")
        if isinstance(says, ast.Constant):
            text = str(says.value)
        elif isinstance(says, ast.JoinedStr):
            text = "".join(str(v.value) for v in says.values if isinstance(v, ast.Constant))
        else:
            continue
        low = kw.get("at_least")
        high = kw.get("at_most")
        found.append(
            (
                float(low.value) if isinstance(low, ast.Constant) else 0.0,
                float(high.value) if isinstance(high, ast.Constant) else math.inf,
                text,
            )
        )
    return found


def test_the_pages_make_claims():
    assert sum(len(page_claims(page_code(p))) for p in PAGES) >= 16


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_each_claim_states_its_interval(page):
    for at_least, at_most, says in page_claims(page_code(page)):
        check_interval(at_least, at_most, says)


def test_a_widened_interval_is_caught():
    code = 'timings.claim("a", "b", at_least=0, says="a takes at least 1.05x the time of b")'
    ((low, high, says),) = page_claims(code)
    with pytest.raises(ValueError, match="bounds nothing"):
        check_interval(low, high, says)

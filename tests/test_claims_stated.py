"""Every benchmark claim on a page states its own interval, and bounds something.

``casebook.bench.claims.check_interval`` refuses such a claim when the page runs; this
test reads every ``.claim(...)`` call of every page without running it, so a widened
interval or a sentence that no longer states its bounds fails at once.
"""

from __future__ import annotations

import ast
import math
import re

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


def _prose(page) -> str:
    import json

    cells = json.loads(page.read_text())["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


_STATED = re.compile(r"\((?:asserted|claimed)\b[^)]*\)")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_an_interval_the_prose_types_is_a_claim_s(page):
    """The story states a claim's interval in words ("(asserted: at least 1.02×)", "(asserted:
    between 0.7 and 1.3)"): each such ratio is a bound of one of the page's claims, so an
    interval changed in code and not in the sentence fails here."""
    bounds = {b for low, high, _ in page_claims(page_code(page)) for b in (low, high)}
    for stated in _STATED.findall(_prose(page)):
        typed = re.sub(r"\{glue[^}]*\}`[^`]*`", "", stated)  # a glued number is the claim's own
        ratios = re.findall(r"(\d+(?:\.\d+)?)×|between (\d+(?:\.\d+)?) and (\d+(?:\.\d+)?)", typed)
        for number in {float(n) for found in ratios for n in found if n}:
            assert any(math.isclose(number, b) for b in bounds), (page.name, stated, sorted(bounds))

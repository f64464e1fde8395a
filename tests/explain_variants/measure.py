"""Precision and recall of ``explain`` on the variant corpus (``make.py`` writes it).

For each traceback, the owner of ``explain``'s first answer: a case key, ``finding-N`` or
``family-KEY``, or ``""`` for "no match". A family variant is a hit when that is the owner
``expected.json`` names (for the user's own loop or branch, ``own:lax.API``: the answer
says "your own `lax.API`" first and names family 1). Precision is the hits over the texts
that got an answer (an answer to an unrelated traceback counts against it); recall is the
hits over the family variants.

    .venv/bin/python tests/explain_variants/measure.py                 # this checkout
    .venv/bin/python tests/explain_variants/measure.py ../before      # another checkout

With another checkout's path, its ``casebook`` is imported instead (the explain of
before issue 33 knew only the cases' wordings: its first card's case is its answer).
``tests/test_explain_variants.py`` asserts this checkout's figures.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def corpus() -> list[tuple[str, str, str, str]]:
    """``(name, family, expected owner, text)`` of each stored traceback."""
    expected = json.loads((HERE / "expected.json").read_text())
    return [
        (name, row["family"], row["owner"], (HERE / row["family"] / f"{name}.txt").read_text())
        for name, row in sorted(expected.items())
    ]


def answered(text: str) -> tuple[str, str]:
    """The owner of the first answer and the first line said, by the imported explain."""
    from casebook import explain

    if not hasattr(explain, "rank"):  # before issue 33: the cases' wordings only
        found = explain.find(text)
        return (found[0][0].key if found else "", "")
    ranking = explain.rank(text)
    if not ranking.candidates:
        return "", ""
    return ranking.candidates[0].owner, ranking.says


def hit(expected: str, owner: str, says: str) -> bool:
    """Whether the answer is the expected one (see the module)."""
    if expected.startswith("own:"):
        return owner == "family-drift" and f"your own `{expected[4:]}`" in says
    return owner == expected


def figures() -> dict[str, float]:
    """Hits, answers, precision and recall, and the unrelated texts answered."""
    hits = answers = variants = wrong_unrelated = 0
    for _, family, expected, text in corpus():
        owner, says = answered(text)
        answers += bool(owner)
        if family == "unrelated":
            wrong_unrelated += bool(owner)
            continue
        variants += 1
        hits += hit(expected, owner, says)
    return {
        "variants": variants,
        "hits": hits,
        "answers": answers,
        "precision": hits / answers if answers else 1.0,
        "recall": hits / variants,
        "unrelated answered": wrong_unrelated,
    }


if __name__ == "__main__":
    if len(sys.argv) > 1:
        sys.path.insert(0, str(Path(sys.argv[1]).resolve()))
    for name, family, expected, text in corpus():
        owner, says = answered(text)
        mark = "ok " if (hit(expected, owner, says) if expected else not owner) else "BAD"
        print(f"{mark} {family:9} {name:28} expected {expected or '-':16} got {owner or '-'}")
    print(json.dumps(figures()))

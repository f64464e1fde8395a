"""The board's rows for the bugs the book's own check found (``book/check-findings``).

They belong to no case, so their data is ``findings/findings.toml`` (one ``[[trigger]]``
each, as a case's rows are written) and their programs are the files of ``findings/scripts/``.
Its ``[[signature]]`` entries (each naming its ``finding``, the page's section number) are
what ``explain`` matches a variant of a finding by, as a case folder's are.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from casebook.cases._base import Trigger, script
from casebook.cases._signatures import Signature, signatures

FOLDER = Path(__file__).resolve().parent / "findings"
DOCNAME = "book/check-findings"


def _data() -> dict:
    with open(FOLDER / "findings.toml", "rb") as f:
        return tomllib.load(f)


def _read() -> tuple[Trigger, ...]:
    rows = _data()["trigger"]
    return tuple(
        Trigger(
            row["key"],
            row["title"],
            row.get("upstream", ""),
            DOCNAME,
            script(FOLDER, row["script"]),
            row["recorded"],
            found_by_check=True,
        )
        for row in rows
    )


TRIGGERS = _read()

#: What marks a traceback as one of the findings' (``explain``).
SIGNATURES: tuple[Signature, ...] = signatures(
    _data().get("signature", ()), "findings", "check-findings", DOCNAME
)

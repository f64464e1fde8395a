"""The board's rows for the bugs the book's own check found (``book/check-findings``).

They belong to no case, so their data is ``findings/findings.toml`` (one ``[[trigger]]``
each, as a case's rows are written) and their programs are the files of ``findings/scripts/``.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from casebook.cases._base import Trigger, script

FOLDER = Path(__file__).resolve().parent / "findings"
DOCNAME = "book/check-findings"


def _read() -> tuple[Trigger, ...]:
    with open(FOLDER / "findings.toml", "rb") as f:
        rows = tomllib.load(f)["trigger"]
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

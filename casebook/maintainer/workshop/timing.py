"""Timing the student editions, cell by cell: the figures the workshop plan adds up.

:func:`casebook.maintainer.tools.executor.in_subprocess` runs an edition top to bottom in a given
interpreter (this machine's venv, or the Colab simulation's bare one), recording each
cell's start and end. :func:`summarize` reads the executed notebook: the seconds
of every code cell, the set-up cell's, the *cold start* (from the start of the first cell
to the end of the first cell after the set-up: what a participant waits for a first
result), and the words a participant reads (Markdown and code). :func:`record` stores a
machine's figures in ``book/measurements/workshop/<machine>.json``, which the plan reads
(:mod:`casebook.maintainer.workshop.plan`).

Standard library only: the Colab simulation runs the editions in a venv without casebook.
"""

from __future__ import annotations

import datetime
import json
import platform
import re
from collections.abc import Mapping
from pathlib import Path

from casebook import storage
from casebook.project import ROOT

__all__ = ["MEASUREMENTS", "load", "machine_name", "record", "summarize"]

MEASUREMENTS = ROOT / "book" / "measurements" / "workshop"
"""One JSON file per machine that ran the student editions."""


def _stamp(value: str) -> float:
    return datetime.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


def _words(text: str) -> int:
    return len(re.findall(r"\S+", text))


def summarize(executed: dict) -> dict:
    """The figures of an executed edition: code cells, per-cell seconds, set-up, cold
    start, the whole run, and the words to read."""
    cells = executed["cells"]
    timed = []
    for index, cell in enumerate(cells):
        run = cell.get("metadata", {}).get("execution", {})
        if (
            cell["cell_type"] == "code"
            and "iopub.execute_input" in run
            and "shell.execute_reply" in run
        ):
            timed.append(
                (index, _stamp(run["iopub.execute_input"]), _stamp(run["shell.execute_reply"]))
            )
    code = [c for c in cells if c["cell_type"] == "code"]
    words = sum(_words("".join(c["source"])) for c in cells if c["cell_type"] == "markdown")
    code_words = sum(_words("".join(c["source"])) for c in code[1:])
    first, second = (timed + [None, None])[:2]
    return {
        "code_cells": len(code),
        "timed_cells": len(timed),
        "setup_s": round(first[2] - first[1], 2) if first else None,
        "cold_start_s": round(second[2] - first[1], 2) if first and second else None,
        "run_s": round(sum(end - start for _, start, end in timed), 2),
        "markdown_words": words,
        "code_words": code_words,
        "cells": [[index, round(end - start, 3)] for index, start, end in timed],
    }


def machine_name(kind: str = "") -> str:
    """A file name for this machine's figures: ``kind`` (``colab-sim``), or the device as
    the status board's run records name it (``cpu-amd-epyc-2-cores``)."""
    if kind:
        return kind
    from casebook.bench import device_label, records

    return records.slug(device_label())


def record(kind: str, pages: Mapping[str, dict], versions: Mapping[str, str]) -> Path:
    """Store one machine's figures (``kind``: ``colab-sim`` or ``""`` for this machine)."""
    name = machine_name(kind)
    data = {
        "machine": name,
        "date": datetime.date.today().isoformat(),
        "python": platform.python_version(),
        "versions": dict(versions),
        "pages": dict(pages),
    }
    path = MEASUREMENTS / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    storage.write_atomic(path, json.dumps(data, indent=1, sort_keys=True) + "\n")
    return path


def load() -> dict[str, dict]:
    """Every machine's stored figures, by machine name."""
    return {p.stem: json.loads(p.read_text()) for p in sorted(MEASUREMENTS.glob("*.json"))}

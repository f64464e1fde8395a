"""The workshop plan of ``book/teach.md``, added up from measured figures.

Each block of the plan follows the Carpentries' episodes (questions, objectives, key
points, teaching and exercise minutes). A block's **teaching minutes** are the time to
go through its student edition: its words at :data:`READING_WPM` (Markdown and code, read
and explained aloud) plus the seconds its cells took to run in the simulated Colab runtime
(:mod:`casebook.maintainer.workshop.simulate`), cold start included. Its **exercise minutes** are the
plan's allotment to each exercise set in the room. Breaks and the set-up block are fixed
allotments. The plan states its length; :func:`render` shows the arithmetic and the
slack, and :func:`check` fails when the plan does not fit its length with at least
:data:`SLACK` to spare (so a page that grows moves a block to the second session, or the
plan says how long it really is).

``python3 -m casebook sync`` rewrites the plan's part of ``book/teach.md`` between its
markers (:func:`rewritten`), with a block per case from its ``case.toml``; a case whose
page has no measured figures shows as not measured, and ``tests/test_workshop.py`` fails
until it is measured (:func:`unmeasured`).
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from casebook.cases import CASES, FAMILIES, BugFamily, Case, family_words
from casebook.maintainer.workshop.timing import load
from casebook.project import ROOT

__all__ = [
    "FIXED",
    "READING_WPM",
    "SESSION_MINUTES",
    "SLACK",
    "TEACH",
    "Block",
    "check",
    "blocks",
    "case_block",
    "pages",
    "render",
    "rewritten",
    "unmeasured",
]

TEACH = ROOT / "book" / "teach.md"
START, END = "<!-- plan: start (python3 -m casebook sync) -->", "<!-- plan: end -->"

READING_WPM = 120
"""Words a minute when a page is read and explained aloud with its code (silent reading of
prose runs at 200 to 250; code and jaxprs slower)."""

_NUMBERS = {1: "One", 2: "Two", 3: "Three", 4: "Four"}

SESSION_MINUTES = 180
"""The advertised length of one session."""

SLACK = 0.15
"""The least share of a session left free for questions, stragglers and set-up trouble."""

COLAB = "colab-sim"
"""The measured machine whose seconds the plan adds: the simulated Colab runtime."""


@dataclasses.dataclass(frozen=True)
class Block:
    """One block of the plan: a page's student edition (or a fixed allotment)."""

    title: str
    page: str | None
    exercises: Mapping[str, int]
    questions: tuple[str, ...] = ()
    objectives: tuple[str, ...] = ()
    keypoints: tuple[str, ...] = ()
    fixed_minutes: int = 0
    session: int = 1
    slot: int = 0  # its place in the session


FIXED = (
    Block(
        "Set-up and the jaxpr primer",
        None,
        {},
        ("How do I run the book's notebooks, and read a jaxpr?",),
        (
            "Open a student edition in Colab and run its set-up cell.",
            "Read types and primitives in a jaxpr.",
        ),
        ("A jaxpr lists every value's type; `weak_type` marks a Python scalar's type.",),
        fixed_minutes=10,
        slot=0,
    ),
    Block("Break", None, {}, fixed_minutes=10, slot=3),
    Block("Break", None, {}, fixed_minutes=10, session=2, slot=2),
    Block(
        "Does my code have this bug? The lessons",
        "lessons",
        {},
        ("How do I find these bugs in my own optimizer and model?",),
        ("Run `check_optimizer` on the cases' set-ups, then on your own.",),
        (
            "The check traces `init` and two updates and names each finding's family, by its "
            "number and name.",
        ),
        fixed_minutes=15,
        session=3,
        slot=1,
    ),
)
"""The plan's blocks that are no case's: set-up, breaks, the lessons. Each case's block is
its ``case.toml``'s ``[workshop]`` table (:func:`blocks`)."""


def case_block(case: Case) -> Block:
    """A case's block, from its ``[workshop]`` table; a case without one raises."""
    w = case.workshop
    if not w:
        raise ValueError(
            f"{case.key}: case.toml has no [workshop] table, so the workshop plan leaves the "
            "case out; add one (see the template), then run `python3 -m casebook sync`"
        )
    return Block(
        w["title"],
        Path(case.docname).name,
        dict(w.get("exercises", {})),
        tuple(w.get("questions", ())),
        tuple(w.get("objectives", ())),
        tuple(w.get("keypoints", ())),
        session=w["session"],
        slot=w["slot"],
    )


def blocks(cases: Iterable[Case] = CASES) -> tuple[Block, ...]:
    """Every block of the plan, the fixed ones and each case's, in session and slot order
    (a case that takes a fixed block's slot comes after it)."""
    every = [(b, 0) for b in FIXED] + [(case_block(c), 1) for c in cases]
    return tuple(b for b, _ in sorted(every, key=lambda bk: (bk[0].session, bk[0].slot, bk[1])))


def pages(cases: Iterable[Case] = CASES) -> tuple[str, ...]:
    """The pages a workshop uses (``notebooks/NN-...``, ``book/lessons``), in the plan's
    order: the student and teacher editions are cut from these."""
    docnames = {Path(c.docname).name: c.docname for c in cases}
    return tuple(
        docnames.get(b.page, f"book/{b.page}") for b in blocks(cases) if b.page is not None
    )


NOT_MEASURED = "not measured: run `python3 -m casebook workshop --colab-sim`"


def _teaching(block: Block, pages: Mapping[str, dict]) -> tuple[float, str]:
    """Teaching minutes of a block and the arithmetic behind them (0 where its page has
    no figures yet: :func:`unmeasured` names those)."""
    if block.page is None:
        return block.fixed_minutes, f"{block.fixed_minutes} (fixed)"
    if block.page not in pages:
        return block.fixed_minutes, NOT_MEASURED
    fig = pages[block.page]
    words = fig["markdown_words"] + fig["code_words"]
    reading = words / READING_WPM
    running = fig["run_s"] / 60
    minutes = reading + running + block.fixed_minutes
    extra = f" + {block.fixed_minutes} (own code)" if block.fixed_minutes else ""
    return (
        minutes,
        f"{words} words / {READING_WPM} = {reading:.1f}; cells {fig['run_s']:.0f} s = {running:.1f}{extra}",
    )


def rows(data: Mapping[str, dict] | None = None, cases: Iterable[Case] = CASES) -> list[dict]:
    """Every block's figures: teaching and exercise minutes, and their arithmetic."""
    data = load() if data is None else data
    colab = data[COLAB]["pages"]
    here = {k: v for k, v in data.items() if not k.startswith("colab-sim")}
    local = next(iter(here.values()))["pages"] if here else {}
    bare = data.get(COLAB + "-without-jax", {}).get("pages", {})
    out = []
    for block in blocks(cases):
        teaching, arithmetic = _teaching(block, colab)
        exercises = sum(block.exercises.values())
        fig = colab.get(block.page or "", {})
        out.append(
            {
                "block": block,
                "teaching": teaching,
                "exercises": exercises,
                "minutes": math.ceil(teaching + exercises),
                "arithmetic": arithmetic,
                "cells": fig.get("code_cells"),
                "colab_s": fig.get("run_s"),
                "cold_s": fig.get("cold_start_s"),
                "here_s": local.get(block.page or "", {}).get("run_s"),
                "cold_bare_s": bare.get(block.page or "", {}).get("cold_start_s"),
            }
        )
    return out


def sessions(
    data: Mapping[str, dict] | None = None, cases: Iterable[Case] = CASES
) -> dict[int, int]:
    """The minutes each session's blocks add up to."""
    totals: dict[int, int] = {}
    for row in rows(data, cases):
        totals[row["block"].session] = totals.get(row["block"].session, 0) + row["minutes"]
    return totals


def unmeasured(data: Mapping[str, dict] | None = None, cases: Iterable[Case] = CASES) -> list[str]:
    """The plan's pages with no figures from the simulated Colab runtime."""
    data = load() if data is None else data
    measured = data.get(COLAB, {}).get("pages", {})
    return [b.page for b in blocks(cases) if b.page is not None and b.page not in measured]


def check(data: Mapping[str, dict] | None = None) -> list[str]:
    """The sessions that do not fit :data:`SESSION_MINUTES` with :data:`SLACK` to spare."""
    limit = SESSION_MINUTES * (1 - SLACK)
    return [
        f"session {s}: {m} min, more than {limit:.0f} ({SESSION_MINUTES} less {SLACK:.0%} slack)"
        for s, m in sessions(data).items()
        if m > limit
    ]


def _ref(label: str) -> str:
    return f"{{ref}}`{label}`"


def render(
    data: Mapping[str, dict] | None = None,
    cases: Iterable[Case] = CASES,
    families: Iterable[BugFamily] = FAMILIES,
) -> str:
    """The plan's Markdown: one table per session, each block's arithmetic, the slack; a
    block's ``{family:KEY}`` (and ``{number:KEY}``, ``{name:KEY}``) in the families' words
    (:func:`casebook.cases.family_words`)."""
    data = load() if data is None else data
    cases = tuple(cases)
    all_rows = rows(data, cases)
    colab, when = data[COLAB], data[COLAB]["date"]
    count = len(sessions(data, cases))
    out = [
        START,
        "",
        f"{_NUMBERS.get(count, count)} sessions of {SESSION_MINUTES} minutes. A block's teaching minutes are its student "
        f"edition's words at {READING_WPM} a minute (read and explained aloud, code included) "
        f"plus the seconds its cells ran in a simulated Colab runtime (`python3 -m casebook "
        f"workshop --colab-sim`, {when}: a fresh runtime per notebook with Colab's jax "
        f"preinstalled, Python {colab['python']}, on this book's 2-core build machine), cold "
        f"start included (its downloads came from that machine's package mirror, faster than "
        f"Colab's network: expect a longer first cell in Colab). Exercise minutes are the "
        f"plan's allotment. Each session keeps at "
        f"least {SLACK:.0%} of its time free.",
        "",
    ]
    for session, total in sessions(data, cases).items():
        out += [
            f"**Session {session}**: {total} of {SESSION_MINUTES} minutes planned, "
            f"{SESSION_MINUTES - total} free ({(SESSION_MINUTES - total) / SESSION_MINUTES:.0%}).",
            "",
            "| block | teaching (min) | exercises in the room (min) | block (min) | the arithmetic |",
            "|---|---|---|---|---|",
        ]
        for row in (r for r in all_rows if r["block"].session == session):
            block = row["block"]
            exercises = ", ".join(f"{_ref(k)} ({v})" for k, v in block.exercises.items()) or "none"
            out.append(
                f"| {block.title} | {row['teaching']:.1f} | {exercises} | {row['minutes']} | "
                f"{row['arithmetic']} |"
            )
        out.append("")
    totals = sessions(data, cases)
    out += [
        f"In all, {sum(totals.values())} minutes of blocks in {len(totals)} sessions "
        f"({', '.join(str(m) for m in totals.values())}).",
        "",
    ]
    out += _episodes(all_rows)
    out += [END]
    return family_words("\n".join(out), families)


def _episodes(all_rows: list[dict]) -> list[str]:
    out = ["### The blocks", ""]
    for row in all_rows:
        block = row["block"]
        if not block.questions:
            continue
        out += [f"#### {block.title}", ""]
        if block.page and row["colab_s"] is None:
            out += [f"Student edition: {NOT_MEASURED}.", ""]
        elif block.page:
            bare = (
                f", {row['cold_bare_s']:.0f} s where jax must be installed first"
                if row["cold_bare_s"] is not None
                else ""
            )
            here = f"{row['here_s']:.0f} s" if row["here_s"] is not None else "not measured"
            out.append(
                f"Student edition: {row['cells']} code cells. Their cells ran for "
                f"{row['colab_s']:.0f} s in the Colab simulation (first result {row['cold_s']:.0f} s "
                f"after the first cell started{bare}); on the build machine, set up: {here}."
            )
            out.append("")
        for name, items in (
            ("Questions", block.questions),
            ("Objectives", block.objectives),
            ("Key points", block.keypoints),
        ):
            out.append(f"**{name}**")
            out.append("")
            out += [f"- {item}" for item in items]
            out.append("")
    return out


def rewritten(
    text: str, cases: Iterable[Case] = CASES, families: Iterable[BugFamily] = FAMILIES
) -> str:
    """``book/teach.md``'s text with the plan between its markers rendered anew."""
    pattern = re.compile(r"<!-- plan: start\b.*?" + re.escape(END), re.S)
    if not pattern.search(text):
        raise ValueError(f"{TEACH}: no plan markers ({START} ... {END})")
    plan = render(cases=cases, families=families)
    return pattern.sub(lambda _: plan, text)

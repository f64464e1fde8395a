"""The workshop plan of ``book/teach.md``, added up from measured figures.

Each block of the plan follows the Carpentries' episodes (questions, objectives, key
points, teaching and exercise minutes). A block's **teaching minutes** are the time to
go through its student edition: its words at :data:`READING_WPM` (Markdown and code, read
and explained aloud) plus the seconds its cells took to run in the simulated Colab runtime
(:mod:`casebook.workshop.simulate`), cold start included. Its **exercise minutes** are the
plan's allotment to each exercise set in the room. Breaks and the set-up block are fixed
allotments. The plan states its length; :func:`render` shows the arithmetic and the
slack, and :func:`check` fails when the plan does not fit its length with at least
:data:`SLACK` to spare (so a page that grows moves a block to the second session, or the
plan says how long it really is).

``python3 -m casebook workshop --plan`` rewrites the plan's part of ``book/teach.md``
between its markers; ``tests/test_workshop.py`` fails while it is stale.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping

from casebook import storage
from casebook.project import ROOT
from casebook.workshop.timing import load

__all__ = [
    "BLOCKS",
    "READING_WPM",
    "SESSION_MINUTES",
    "SLACK",
    "TEACH",
    "Block",
    "check",
    "render",
    "sync",
]

TEACH = ROOT / "book" / "teach.md"
START, END = "<!-- plan: start (python3 -m casebook workshop --plan) -->", "<!-- plan: end -->"

READING_WPM = 120
"""Words a minute when a page is read and explained aloud with its code (silent reading of
prose runs at 200 to 250; code and jaxprs slower)."""

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


BLOCKS = (
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
    ),
    Block(
        "Family 1, state that changes type: case 1 (optax#828)",
        "01-optax-828-zero-nans-multisteps",
        {"case1-ex1": 8, "case1-ex2": 8},
        ("Why does a `lax.cond` reject a state that merely changed dtype?",),
        (
            "Reproduce the reporter's error and name the state leaf at fault.",
            "Trace the one line that turns a bool into a weak int32.",
            "Compare the cast-back fix with the select fix.",
        ),
        (
            "Both branches of a `cond` are traced and must return identical types.",
            "Arithmetic with a Python scalar promotes a bool to a weak integer; `jnp.where` keeps dtypes.",
        ),
    ),
    Block(
        "Family 1 under 64-bit mode: case 4 (optax#1210)",
        "04-optax-1210-lbfgs-x64-scan",
        {"case4-ex1": 6},
        ("Why does a counter that works in 32-bit mode break a scan in 64-bit mode?",),
        ("Find the carry leaf whose dtype differs between `init` and `update`.",),
        (
            "`jnp.asarray(0)` follows the default integer (int64 under x64); an explicit int32 does not.",
        ),
    ),
    Block("Break", None, {}, fixed_minutes=10),
    Block(
        "Family 2, non-array leaves reaching optax: case 5 (diffrax#521)",
        "05-diffrax-521-pidcontroller-multisteps",
        {"case5-ex3": 5, "case5-ex1": 10},
        ("Why does a model that trains with `adam` fail with `MultiSteps`?",),
        ("Find the function leaf in the model.", "Partition the model so optax sees arrays only."),
        (
            "An operand of `lax.cond` must be all JAX types; a Module may hold functions.",
            "`eqx.partition(model, eqx.is_inexact_array)` before `init` and `update`.",
        ),
    ),
    Block(
        "Family 2 again: case 3 (optax#1017)",
        "03-optax-1017-lbfgs-equinox",
        {"case3-ex1": 8},
        ("What does `optax.lbfgs` need that `adam` does not?",),
        ("Pass `params`, `value`, `grad` and `value_fn` to L-BFGS on an Equinox model.",),
        ("Hand optax arrays only, and rebuild the model inside `value_fn`.",),
        session=2,
    ),
    Block(
        "Family 3, a callable that is data: case 2 (optax#1373)",
        "02-optax-1373-callable-mask-inject",
        {"case2-ex3": 5, "case2-ex2": 10},
        ("Why is a mask called with the step count?",),
        (
            "Show that `inject_hyperparams` treats every callable as a schedule.",
            "Fix it with `static_args`.",
        ),
        (
            "A callable argument of `inject_hyperparams` is a schedule unless `static_args` names it.",
        ),
        session=2,
    ),
    Block("Break", None, {}, fixed_minutes=10, session=2),
    Block(
        "Does my code have this bug? The lessons",
        "lessons",
        {},
        ("How do I find these bugs in my own optimizer and model?",),
        ("Run `check_optimizer` on the five set-ups, then on your own.",),
        ("The check traces `init` and two updates and reports state drift and non-array leaves.",),
        fixed_minutes=15,
        session=2,
    ),
)


def _teaching(block: Block, pages: Mapping[str, dict]) -> tuple[float, str]:
    """Teaching minutes of a block and the arithmetic behind them."""
    if block.page is None:
        return block.fixed_minutes, f"{block.fixed_minutes} (fixed)"
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


def rows(data: Mapping[str, dict] | None = None) -> list[dict]:
    """Every block's figures: teaching and exercise minutes, and their arithmetic."""
    data = load() if data is None else data
    colab = data[COLAB]["pages"]
    here = {k: v for k, v in data.items() if not k.startswith("colab-sim")}
    local = next(iter(here.values()))["pages"] if here else {}
    bare = data.get(COLAB + "-without-jax", {}).get("pages", {})
    out = []
    for block in BLOCKS:
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


def sessions(data: Mapping[str, dict] | None = None) -> dict[int, int]:
    """The minutes each session's blocks add up to."""
    totals: dict[int, int] = {}
    for row in rows(data):
        totals[row["block"].session] = totals.get(row["block"].session, 0) + row["minutes"]
    return totals


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


def render(data: Mapping[str, dict] | None = None) -> str:
    """The plan's Markdown: one table per session, each block's arithmetic, the slack."""
    data = load() if data is None else data
    all_rows = rows(data)
    colab, when = data[COLAB], data[COLAB]["date"]
    out = [
        START,
        "",
        f"Two sessions of {SESSION_MINUTES} minutes. A block's teaching minutes are its student "
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
    for session, total in sessions(data).items():
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
    totals = sessions(data)
    out += [
        f"In all, {sum(totals.values())} minutes of blocks in {len(totals)} sessions "
        f"({', '.join(str(m) for m in totals.values())}).",
        "",
    ]
    out += _episodes(all_rows)
    out += [END]
    return "\n".join(out)


def _episodes(all_rows: list[dict]) -> list[str]:
    out = ["### The blocks", ""]
    for row in all_rows:
        block = row["block"]
        if not block.questions:
            continue
        out += [f"#### {block.title}", ""]
        if block.page:
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


def sync() -> bool:
    """Rewrite the plan in ``book/teach.md`` from the stored figures; whether it changed."""
    text = TEACH.read_text()
    pattern = re.compile(re.escape(START) + r".*?" + re.escape(END), re.S)
    if not pattern.search(text):
        raise ValueError(f"{TEACH}: no plan markers ({START} ... {END})")
    new = pattern.sub(lambda _: render(), text)
    if new != text:
        storage.write_text(TEACH, new)
    return new != text

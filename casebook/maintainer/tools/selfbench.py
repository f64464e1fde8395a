"""``python3 -m casebook bench``: how fast the book itself is, and how steady its benchmarks.

It prints, on this machine:

* the **calibration**, first and last: a fixed small workload (a fresh interpreter that
  imports jax and compiles and runs one fixed program, no compilation cache), median of
  three. Machines of one class differ by up to 2.5x, so every figure is read beside it,
  as a figure, never an assert; ``--calibration`` prints it alone;
* the overhead of a release run: the wall time of ``import jax, optax`` on optax 0.1.9,
  cold (a fresh interpreter) and warm (forked from this process's server), medians of a
  few;
* each executed page's time, one page at a time (``pytest --nbmake``), run twice (each
  run's kernel starts its own warm release servers; malloc set as the test command sets
  it, ``QUIET_MALLOC``);
* every benchmark claim the pages assert (:mod:`casebook.bench.claims`), with its ratio in
  both runs and the spread between them, and the A/A control of each;
* the time of the whole test command after set-up (``--suite``; it runs the suite once
  more, so it is off by default).

``--profile [PAGE ...]`` instead runs each page once, cell by cell, and prints where its time
goes (kernel start, imports, era runs, release runs, benchmarks, traces) and the slowest
cells (:mod:`casebook.maintainer.tools.profile`).

Pages run serially, so that no benchmark shares the CPU with another page. Nothing is
asserted here: speed goals are figures to read, not tests a loaded machine can break.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from casebook.bench.claims import LOG_ENV
from casebook.display import Table, format_number
from casebook.maintainer.tools import pageruns
from casebook.runenv import QUIET_MALLOC

__all__ = ["calibration", "claims_spread", "main", "run_overhead", "suite_seconds"]

OVERHEAD_CODE = "import jax, optax"

CALIBRATION_CODE = """
import time
t0 = time.perf_counter()
import jax, jax.numpy as jnp
step = jax.jit(jax.grad(lambda w, x: jnp.tanh(jnp.tanh(x @ w) @ w.T).sum()))
step(jnp.ones((64, 64)), jnp.ones((8, 64))).block_until_ready()
print(time.perf_counter() - t0)
"""
"""The calibration's workload: import jax, compile and run one fixed gradient."""


def calibration(samples: int = 3) -> float:
    """Median seconds of :data:`CALIBRATION_CODE` in a fresh interpreter (this one's),
    on the CPU, with jax's persistent compilation cache off."""
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "JAX_ENABLE_COMPILATION_CACHE": "false"}
    times = [
        float(
            subprocess.run(
                [sys.executable, "-c", CALIBRATION_CODE],
                env=env,
                check=True,
                capture_output=True,
                text=True,
            ).stdout
        )
        for _ in range(samples)
    ]
    return statistics.median(times)


def calibration_line() -> str:
    """The calibration as the bench prints it beside its figures."""
    return f"calibration: {calibration():.2f} s (fresh interpreter: import jax, compile and run one fixed gradient; median of 3)"


def run_overhead(samples: int = 5) -> dict[str, float]:
    """Median seconds of a release run of ``import jax, optax`` (optax 0.1.9): cold, warm
    (server already started), and the one-off start of a warm server."""
    from casebook import releases
    from casebook.releases import _pool

    def median_of(cold: bool) -> float:
        os.environ["CASEBOOK_COLD_RUNS"] = "1" if cold else "0"
        try:
            times = []
            for _ in range(samples):
                t0 = time.perf_counter()
                releases.expect(releases.run(OVERHEAD_CODE, "optax==0.1.9"))
                times.append(time.perf_counter() - t0)
            return statistics.median(times)
        finally:
            os.environ.pop("CASEBOOK_COLD_RUNS", None)

    cold = median_of(cold=True)
    _pool.shutdown()  # this process's servers: the start is timed from nothing
    t0 = time.perf_counter()
    releases.run("pass", "optax==0.1.9")
    start = time.perf_counter() - t0
    return {"cold": cold, "warm": median_of(cold=False), "server start": start}


def suite_seconds() -> tuple[bool, float]:
    """Run the README's test command's pytest (after set-up) once: (passed, seconds)."""
    from casebook.maintainer.tools.suite import TEST_ARGS, run_tests

    t0 = time.perf_counter()
    try:
        run_tests(sys.executable, TEST_ARGS)
        passed = True
    except subprocess.CalledProcessError:
        passed = False
    return passed, time.perf_counter() - t0


def claims_spread(claims: dict[str, list[list[dict]]]) -> Table:
    """Per page and claim: the ratio in each run, the spread, the interval, the A/A."""
    rows = []
    for page, per_run in claims.items():
        by_claim: dict[str, list[dict]] = defaultdict(list)
        for one in (c for run in per_run for c in run):
            by_claim[one["says"]].append(one)
        for says, made in by_claim.items():
            ratios = [m["ratio"] for m in made]
            spread = (max(ratios) - min(ratios)) / statistics.mean(ratios)
            high = "inf" if made[0]["high"] == float("inf") else format_number(made[0]["high"])
            rows.append(
                (
                    Path(page).stem[:24],
                    says,
                    " / ".join(f"{r:.3f}" for r in ratios),
                    f"{100 * spread:.1f}%",
                    f"[{format_number(made[0]['low'])}, {high}]",
                    " / ".join(f"{m['control']:.3f}" for m in made),
                )
            )
    return Table(
        ("page", "claim", "ratio per run", "spread", "asserted", "A/A per run"), tuple(rows)
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m casebook bench", description=__doc__)
    parser.add_argument("pages", nargs="*", default=list(pageruns.DEFAULT_PAGES))
    parser.add_argument("--runs", type=int, default=2, help="runs of each page (default 2)")
    parser.add_argument("--suite", action="store_true", help="also time the whole test command")
    parser.add_argument(
        "--calibration", action="store_true", help="print only the calibration, and exit"
    )
    parser.add_argument(
        "--profile", action="store_true", help="time each page's cells by kind instead"
    )
    parser.add_argument("--top", type=int, default=10, help="slowest cells --profile lists")
    args = parser.parse_args(argv)
    if args.calibration:
        print(calibration_line())
        return 0
    if args.profile:
        from casebook.maintainer.tools import profile

        return profile.main(pageruns.pages(args.pages), args.top)
    return _bench(args)


def _bench(args: argparse.Namespace) -> int:
    print(calibration_line(), flush=True)
    overhead = run_overhead()
    print("release run, import jax, optax on optax 0.1.9 (median):")
    for name, seconds in overhead.items():
        print(f"  {name:13} {seconds:.3f} s")

    pages = pageruns.pages(args.pages)
    times: dict[str, list[float]] = defaultdict(list)
    claims: dict[str, list[list[dict]]] = defaultdict(list)
    failed = []
    with tempfile.TemporaryDirectory(prefix="casebook-bench-") as tmp:
        for run in range(args.runs):
            for page in pages:
                log = Path(tmp) / f"{run}-{Path(page).stem}.jsonl"
                # malloc as the test command sets it: a large benchmark's buffers are
                # reused, not first-touched afresh (a bench without it once read 1.30 for
                # page 02's claim bounded at 1.25)
                env = {**QUIET_MALLOC, LOG_ENV: str(log)}
                summary, tail = pageruns.run_page(page, env=env)
                seconds = summary["seconds"]
                times[page].append(seconds)
                if not summary["passed"]:
                    failed.append(page)
                    print(f"FAIL {page}\n{tail}", flush=True)
                made = (
                    [json.loads(line) for line in log.read_text().splitlines()]
                    if log.exists()
                    else []
                )
                if made:
                    claims[page].append(made)
                print(f"run {run + 1}: {page} {seconds:.1f} s, {len(made)} claim(s)", flush=True)
    print()
    print(
        Table(
            ("page", *(f"run {i + 1} (s)" for i in range(args.runs))),
            tuple((p, *(f"{s:.1f}" for s in times[p])) for p in pages),
            f"pages in all, per run: {', '.join(f'{sum(t[i] for t in times.values()):.0f} s' for i in range(args.runs))}",
        )
    )
    print()
    print(claims_spread(claims))
    if args.suite:
        passed, seconds = suite_seconds()
        print(
            f"\nthe test command after set-up: {seconds:.0f} s ({'passed' if passed else 'FAILED'})"
        )
    print(calibration_line())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

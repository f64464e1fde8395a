"""Interleaved timing of a few variants of one step: :func:`interleave` and its result
:class:`Timings` (statistics, claims, table, plot, JSON).

The heart of :mod:`casebook.bench`: the rounds with rotated order, the A/A control
retried when it reads off, and the samples every claim and figure is computed from.
"""

from __future__ import annotations

import math
import resource
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import jax
import numpy as np

from casebook.bench._device import _run_meta
from casebook.bench.claims import CONTROL_SUFFIX, TOLERANCE, Claim, claim, control_ratio
from casebook.display import Table, TableDisplay, format_number, pick_unit, unit_scale

if TYPE_CHECKING:
    from matplotlib.axes import Axes


@dataclass(repr=False)
class Timings(TableDisplay):
    """Per-call samples of each variant, from :func:`interleave` (or JSON).

    ``wall``, ``cpu`` (process CPU seconds) and ``faults`` (minor page faults) map a
    variant name to one value per timed round, each already divided by the calls
    made in that round.  ``meta`` says where and when (device, jax version,
    platform, machine, date, and the interleave settings).

    Examples:
        Timings that came back from a child process as a dict:

        >>> t = Timings.from_dict({
        ...     "wall": {"fix A": [2.0, 2.1], "fix A (A/A)": [2.0, 2.1], "fix B": [1.0, 1.1]},
        ...     "cpu": {"fix A": [2.0, 2.1], "fix A (A/A)": [2.0, 2.1], "fix B": [1.0, 1.1]},
        ...     "faults": {"fix A": [0, 0], "fix A (A/A)": [0, 0], "fix B": [0, 0]},
        ...     "meta": {"device": "cpu"},
        ... })
        >>> round(t.ratio("fix A", "fix B"), 2)
        1.95
        >>> print(t.claim("fix A", "fix B", at_least=1.5, says="fix A takes at least 1.5x fix B"))
        fix A takes at least 1.5x fix B: fix A / fix B = 1.95 in [1.5, ∞] (holds; A/A 1.000)
    """

    wall: dict[str, list[float]]
    cpu: dict[str, list[float]]
    faults: dict[str, list[float]]
    meta: dict[str, Any] = field(default_factory=_run_meta)
    claims: list[Claim] = field(default_factory=list)
    """The claims asserted on these timings so far, in order."""

    @property
    def names(self) -> list[str]:
        return list(self.wall)

    def median(self, name: str) -> float:
        """Median wall seconds per call of variant ``name``."""
        return float(np.median(self.wall[name]))

    def iqr(self, name: str) -> tuple[float, float]:
        """25th and 75th percentile of wall seconds per call of variant ``name``."""
        q25, q75 = np.percentile(self.wall[name], [25, 75])
        return float(q25), float(q75)

    def ratio(self, a: str, b: str) -> float:
        """How many times as long ``a`` takes as ``b`` (2.0: twice as slow): the median of
        the per-round ratios, each round's ``a`` over the same round's ``b``, so that a
        burst of load that slows one round weighs on both sides of its ratio. Timings of
        unequal rounds (stored ones, say) fall back to the ratio of the medians."""
        wall_a, wall_b = self.wall[a], self.wall[b]
        if len(wall_a) != len(wall_b):
            return self.median(a) / self.median(b)
        return float(np.median(np.asarray(wall_a) / np.asarray(wall_b)))

    def on_cpu(self) -> Timings:
        """These timings with process CPU seconds as the measured time: for claims about
        work done (a Python loop against a compiled scan, say) on a machine shared with
        other work, where wall time also counts the waiting. The page must say so."""
        cpu = {k: list(v) for k, v in self.cpu.items()}
        return Timings(cpu, cpu, {k: list(v) for k, v in self.faults.items()}, dict(self.meta))

    def claim(
        self,
        numerator: str,
        denominator: str,
        *,
        at_least: float = 0.0,
        at_most: float = math.inf,
        says: str,
    ) -> Claim:
        """Assert a sentence of the page about ``numerator / denominator`` (medians),
        after the A/A control; see :func:`casebook.bench.claims.claim`."""
        made = claim(self, numerator, denominator, at_least=at_least, at_most=at_most, says=says)
        self.claims.append(made)
        return made

    def rows(self) -> list[dict[str, Any]]:
        """One dict per variant: variant, median_ms, q25_ms, q75_ms, cpu_ms (median),
        faults (median per call), n (samples)."""
        rows = []
        for name in self.names:
            q25, q75 = self.iqr(name)
            rows.append(
                {
                    "variant": name,
                    "median_ms": self.median(name) * 1e3,
                    "q25_ms": q25 * 1e3,
                    "q75_ms": q75 * 1e3,
                    "cpu_ms": float(np.median(self.cpu[name])) * 1e3,
                    "faults": float(np.median(self.faults[name])),
                    "n": len(self.wall[name]),
                }
            )
        return rows

    def table(self, unit: str = "ms", faults: bool = True) -> Table:
        """The rows as a :class:`~casebook.display.Table` in ``unit`` ('s', 'ms', 'us' or 'ns'), with the
        page-fault column unless ``faults`` is False; captioned with the device.
        """
        scale = unit_scale(unit) / 1e3
        header: tuple[str, ...] = ("variant", f"median ({unit})", f"IQR ({unit})", f"CPU ({unit})")
        header += ("faults/call", "n") if faults else ("n",)
        body = []
        for row in self.rows():
            cells: tuple[str, ...] = (
                row["variant"],
                format_number(row["median_ms"] * scale),
                f"{format_number(row['q25_ms'] * scale)} - {format_number(row['q75_ms'] * scale)}",
                format_number(row["cpu_ms"] * scale),
            )
            cells += (format_number(row["faults"]), str(row["n"])) if faults else (str(row["n"]),)
            body.append(cells)
        caption = f"{self.meta.get('device', '')}, jax {self.meta.get('jax', '?')}"
        return Table(header, tuple(body), caption)

    def plot(
        self, ax: Axes | None = None, title: str | None = None, baseline: str | None = None
    ) -> Axes:
        """Horizontal bars of median wall time per call, with IQR error bars and value
        labels (right of the error bar), first variant on top.  With ``baseline`` (a
        variant name) its median is drawn as a dashed line and each label adds the
        ratio to it.  The title defaults to the device.  Returns the Axes."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(6.4, 0.8 + 0.5 * len(self.names)))
        unit, scale = pick_unit(max(self.median(n) for n in self.names))
        medians = [self.median(n) * scale for n in self.names]
        quartiles = [self.iqr(n) for n in self.names]
        errors = [
            [m - q25 * scale for m, (q25, _) in zip(medians, quartiles)],
            [q75 * scale - m for m, (_, q75) in zip(medians, quartiles)],
        ]
        bars = ax.barh(self.names, medians, xerr=errors, capsize=3)
        labels = [f"{format_number(m)} {unit}" for m in medians]
        if baseline is not None:
            ratios = [self.ratio(name, baseline) for name in self.names]
            labels = [f"{label} ({r:.2f}×)" for label, r in zip(labels, ratios)]
            ax.axvline(self.median(baseline) * scale, color="grey", linestyle="--", linewidth=1)
        for bar, label, (_, q75) in zip(bars, labels, quartiles):
            y = bar.get_y() + bar.get_height() / 2
            ax.annotate(
                label, (q75 * scale, y), xytext=(6, 0), textcoords="offset points", va="center"
            )
        ax.invert_yaxis()
        ax.margins(x=0.4)
        ax.set_xlabel(f"wall time per call ({unit}): median, IQR bars")
        ax.set_title(self.meta.get("device", "") if title is None else title)
        return ax

    def to_dict(self) -> dict[str, Any]:
        """Plain, JSON-serialisable copy; :meth:`from_dict` inverts it."""
        return {
            "wall": {k: list(v) for k, v in self.wall.items()},
            "cpu": {k: list(v) for k, v in self.cpu.items()},
            "faults": {k: list(v) for k, v in self.faults.items()},
            "meta": dict(self.meta),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Timings:
        """The timings :meth:`to_dict` wrote (in a child process, say)."""
        return cls(
            wall={k: list(v) for k, v in data["wall"].items()},
            cpu={k: list(v) for k, v in data["cpu"].items()},
            faults={k: list(v) for k, v in data["faults"].items()},
            meta=dict(data["meta"]),
        )


def _minor_faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def _time_calls(step: Callable[[], Any], calls: int) -> tuple[float, float, float]:
    """(wall s, CPU s, minor faults) per call, over ``calls`` blocked calls of ``step``."""
    faults_before = _minor_faults()
    cpu_before = time.process_time()
    wall_before = time.perf_counter()
    for _ in range(calls):
        jax.block_until_ready(step())
    wall = time.perf_counter() - wall_before
    cpu = time.process_time() - cpu_before
    faults = _minor_faults() - faults_before
    return wall / calls, cpu / calls, faults / calls


def interleave(
    variants: Mapping[str, Callable[[], Any]],
    *,
    rounds: int = 20,
    warmup: int = 2,
    calls_per_round: int = 1,
    min_seconds: float | None = None,
    control: bool = True,
    attempts: int = 3,
) -> Timings:
    """Time zero-argument ``variants`` round-robin and return their :class:`Timings`.

    Each variant does one step when called (jitted by the caller, state threaded
    through a closure if needed).  First ``warmup`` untimed rounds, then ``rounds``
    timed rounds -- more, whole rounds, until ``min_seconds`` of timed rounds have
    passed, if given.  Round ``r`` starts with the variant at position ``r`` (mod the
    number of variants) and goes on in the given order, wrapping around.  In a round
    each variant is called ``calls_per_round`` times back to back (e.g. one full
    gradient-accumulation cycle), every result blocked on, and one per-call sample
    (total / calls) is recorded.

    With ``control`` (the default) the first variant is timed a second time, as one
    more variant named ``"<first> (A/A)"``: the A/A control that every claim checks
    first (:mod:`casebook.bench.claims`). A timing whose control reads outside
    ``1.0 ± casebook.bench.claims.TOLERANCE`` (a burst of other work on the machine) is
    thrown away and the rounds are timed again, up to ``attempts`` times in all; the
    last timing is returned either way (its ``meta["attempts"]`` says how many it
    took), and a claim on it still fails as unreliable if its control is off.

    Args:
        variants: ``{name: step}``, each step a function without arguments.
        rounds: the timed rounds (at least).
        warmup: the untimed rounds first (compiles, caches).
        calls_per_round: the calls of each variant per round, back to back.
        min_seconds: go on with whole rounds until this much time has passed.
        control: add the A/A control.
        attempts: how many timings to try before keeping one whose control is off.

    Returns:
        The :class:`Timings`, one sample per round and variant.

    Raises:
        ValueError: ``variants`` is empty.

    Examples:
        >>> import jax, jax.numpy as jnp
        >>> x = jnp.ones(1000)
        >>> total = jax.jit(jnp.sum)
        >>> t = interleave({"sum": lambda: total(x), "copy": lambda: x + 0}, rounds=5)
        >>> t.names
        ['sum', 'copy', 'sum (A/A)']
        >>> len(t.wall["sum"]), t.meta["rounds"]
        (5, 5)
    """
    if not variants:
        raise ValueError("interleave needs at least one variant")
    if control:
        first = next(iter(variants))
        variants = {**variants, first + CONTROL_SUFFIX: variants[first]}
    names = list(variants)
    order = _timing_order(names, control)
    for _ in range(warmup):
        for name in order:
            for _ in range(calls_per_round):
                jax.block_until_ready(variants[name]())
    for attempt in range(1, max(1, attempts) + 1):
        timings = _timed_rounds(variants, names, order, rounds, min_seconds, calls_per_round)
        timings.meta.update(warmup=warmup, attempts=attempt)
        if not control or abs(control_ratio(timings)[1] - 1.0) <= TOLERANCE:
            break
    return timings


def _timing_order(names: list[str], control: bool) -> list[str]:
    """The order of a round: the given one, with the A/A twin (last in ``names``) moved to
    the middle, so that neither copy of the first variant runs right after the other, and
    each follows a variant of its own kind of work (a twin that always runs right before its
    original, on the same state, would time a different cache than the original does)."""
    if not control or len(names) < 3:
        return names
    twin, rest = names[-1], names[:-1]
    middle = (len(rest) + 1) // 2
    return rest[:middle] + [twin] + rest[middle:]


def _timed_rounds(
    variants: Mapping[str, Callable[[], Any]],
    names: list[str],
    order: list[str],
    rounds: int,
    min_seconds: float | None,
    calls_per_round: int,
) -> Timings:
    """The timed rounds of :func:`interleave`, each in a rotated ``order``; the samples
    are kept in the order of ``names``."""
    wall: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}
    faults: dict[str, list[float]] = {name: [] for name in names}
    started = time.perf_counter()
    done = 0

    def more() -> bool:
        if done < rounds:
            return True
        return min_seconds is not None and time.perf_counter() - started < min_seconds

    while more():
        shift = done % len(order)
        for name in order[shift:] + order[:shift]:
            w, c, f = _time_calls(variants[name], calls_per_round)
            wall[name].append(w)
            cpu[name].append(c)
            faults[name].append(f)
        done += 1
    settings = {"rounds": done, "calls_per_round": calls_per_round}
    return Timings(wall, cpu, faults, meta={**_run_meta(), **settings})

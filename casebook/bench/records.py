"""Benchmark figures stored as data, so a page can show where else they were measured.

A notebook times its variants live (:func:`casebook.bench.interleave`) on whatever runs
it: a laptop, the CPU build, a GPU runner.  The live figures change with every run, and
a reader of the CPU-built book never sees a GPU figure unless one was stored.  So:

* a run with ``CASEBOOK_RECORD=1`` in its environment saves each benchmark's
  :class:`~casebook.bench.Timings` as JSON under ``book/measurements/<case>/<bench>/``,
  one file per device (a new run on the same device replaces the old file), with the
  device, date and package versions in it; those files are committed;
* :func:`measured_on` loads every stored run of a benchmark, adds the live one, and
  returns a :class:`MeasuredOn` that renders as a "measured on" table and a plot.

Nothing here estimates or converts a figure: a device appears only if a run on it was
stored.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from casebook import storage
from casebook.bench import Timings
from casebook.bench.claims import CONTROL_SUFFIX
from casebook.display import PlainText, Table, TableDisplay, format_number, pick_unit
from casebook.project import PACKAGES, ROOT

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = [
    "MeasuredOn",
    "MeasuredOnSet",
    "RECORD_ENV",
    "STORE",
    "load",
    "measured_on",
    "measured_on_many",
    "save",
    "slug",
    "versions",
]

STORE = ROOT / "book" / "measurements"
"""Where stored runs live, as ``book/measurements/<case>/<bench>/<backend>-<device>.json``."""

RECORD_ENV = "CASEBOOK_RECORD"
"""Set to ``1`` to make :func:`measured_on` store the live run (e.g. on a GPU runner)."""


def versions(packages: Iterable[str] = PACKAGES) -> dict[str, str]:
    """Installed versions of ``packages`` (those that are installed)."""
    found = {}
    for name in packages:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            pass
    return found


def slug(text: str) -> str:
    """``text`` as a file-name part: lower case, runs of other characters as one ``-``
    (``"gpu: NVIDIA H100"`` -> ``gpu-nvidia-h100``)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _check_name(kind: str, name: str) -> None:
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", name):
        raise ValueError(f"{kind} name {name!r}: use lower-case letters, digits and '-'")


def save(
    timings: Timings,
    case: str,
    bench: str,
    *,
    store: Path | None = None,
    package_versions: Mapping[str, str] | None = None,
) -> Path:
    """Store ``timings`` as the run of benchmark ``bench`` of ``case`` on its device.

    ``package_versions`` defaults to :func:`versions` of this process; pass the versions
    that really ran when the timing happened elsewhere (say, an old release in a
    subprocess).  Returns the file written.
    """
    _check_name("case", case)
    _check_name("bench", bench)
    meta = dict(timings.meta)
    meta["versions"] = dict(package_versions or meta.get("versions") or versions())
    device = meta.get("device", "unknown device")
    path = (
        (store or STORE) / case / bench / f"{slug(meta.get('backend', 'cpu'))}-{slug(device)}.json"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    data = Timings(timings.wall, timings.cpu, timings.faults, meta).to_dict()
    return storage.write_atomic(path, json.dumps(data, indent=1, sort_keys=True) + "\n")


def load(case: str, bench: str, *, store: Path | None = None) -> list[Timings]:
    """Every stored run of ``bench`` of ``case``: CPUs first, then accelerators, each by
    device name."""
    folder = (store or STORE) / case / bench
    runs = [Timings.from_dict(json.loads(p.read_text())) for p in sorted(folder.glob("*.json"))]
    return sorted(runs, key=lambda t: (t.meta.get("backend") != "cpu", t.meta.get("device", "")))


@dataclass(frozen=True, repr=False)
class MeasuredOn(TableDisplay):
    """Runs of one benchmark on several devices: ``runs`` is a list of (source, Timings),
    where source is ``"stored"`` or ``"this run"``."""

    case: str
    bench: str
    runs: list[tuple[str, Timings]]

    @property
    def variants(self) -> list[str]:
        """Variant names, in the order of first appearance (copy references last),
        without the A/A control (a check of the run, not a variant of the step)."""
        names: list[str] = []
        for _, t in self.runs:
            names += [n for n in t.names if n not in names and not n.endswith(CONTROL_SUFFIX)]
        return names

    def table(self) -> Table:
        """One row per run: device, source, date, the jax and optax versions (all
        versions are in the stored file), and each variant's median (in a unit chosen
        per row, since devices can differ by orders of magnitude)."""
        header = ("measured on", "source", "date", "jax", "optax", *self.variants)
        rows = []
        for source, t in self.runs:
            unit, scale = pick_unit(max(t.median(n) for n in t.names))
            medians = [
                f"{format_number(t.median(v) * scale)} {unit}" if v in t.wall else "-"
                for v in self.variants
            ]
            pinned = t.meta.get("versions") or {"jax": t.meta.get("jax", "?")}
            rows.append(
                (
                    t.meta.get("device", "?"),
                    source,
                    str(t.meta.get("date", "?"))[:10],
                    pinned.get("jax", "?"),
                    pinned.get("optax", "-"),
                    *medians,
                )
            )
        return Table(header, tuple(rows), f"{self.case} / {self.bench}: median wall time per call")

    def plot(self, ax: Axes | None = None) -> Axes:
        """Grouped horizontal bars, one group per variant and one bar per run, on a log
        axis (a GPU and a CPU can be 100x apart); IQR error bars."""
        import matplotlib.pyplot as plt

        variants, runs = self.variants, self.runs
        if ax is None:
            _, ax = plt.subplots(figsize=(9.6, 0.9 + 0.35 * len(variants) * len(runs)))
        height = 0.8 / len(runs)
        unit, scale = pick_unit(min(t.median(n) for _, t in runs for n in t.names))
        for i, (source, t) in enumerate(runs):
            ys = [j + i * height for j, v in enumerate(variants) if v in t.wall]
            names = [v for v in variants if v in t.wall]
            med = np.array([t.median(v) for v in names]) * scale
            q = np.array([t.iqr(v) for v in names]) * scale
            ax.barh(
                ys,
                med,
                height=height,
                xerr=[med - q[:, 0], q[:, 1] - med],
                capsize=2,
                label=f"{t.meta.get('device', '?')} ({source})",
            )
        ax.set_yticks([j + 0.4 - height / 2 for j in range(len(variants))], variants)
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.set_xlabel(f"median wall time per call ({unit}, log scale), IQR bars")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)
        ax.set_title(f"measured on: {self.case} / {self.bench}")
        return ax


def measured_on(
    case: str,
    bench: str,
    live: Timings | None = None,
    *,
    store: Path | None = None,
    record: bool | None = None,
    package_versions: Mapping[str, str] | None = None,
) -> MeasuredOn:
    """The stored runs of a benchmark plus ``live`` (this run's timings).

    With ``record`` (default: ``CASEBOOK_RECORD=1`` in the environment) the live run is
    stored first, replacing the stored run on the same device.  A stored run on the
    same device as the live one is still shown, as "stored", so a reader can compare
    the build's figure with the committed one.
    """
    if record is None:
        record = os.environ.get(RECORD_ENV) == "1"
    if live is not None and record:
        save(live, case, bench, store=store, package_versions=package_versions)
    runs: list[tuple[str, Timings]] = [("stored", t) for t in load(case, bench, store=store)]
    if live is not None:
        meta = dict(live.meta)
        meta.setdefault("versions", dict(package_versions or versions()))
        runs.append(("this run", Timings(live.wall, live.cpu, live.faults, meta)))
    if not runs:
        raise ValueError(f"no stored or live run of {case}/{bench}")
    return MeasuredOn(case, bench, runs)


class MeasuredOnSet(PlainText, list[MeasuredOn]):
    """Several benchmarks of one case, each a :class:`MeasuredOn`; one table per
    benchmark and one figure with a panel per benchmark."""

    def __str__(self) -> str:
        return "\n\n".join(str(m) for m in self)

    def _repr_html_(self) -> str:
        return "".join(m._repr_html_() for m in self)

    def plot(self) -> Any:
        """One figure, one :meth:`MeasuredOn.plot` panel per benchmark; returns it."""
        import matplotlib.pyplot as plt

        heights = [0.9 + 0.35 * len(m.variants) * len(m.runs) for m in self]
        fig, axes = plt.subplots(
            len(self),
            1,
            figsize=(9.6, sum(heights)),
            gridspec_kw={"height_ratios": heights},
            squeeze=False,
        )
        for m, ax in zip(self, axes[:, 0]):
            m.plot(ax)
        fig.tight_layout()
        return fig


def measured_on_many(case: str, live: Mapping[str, Timings], **kwargs: Any) -> MeasuredOnSet:
    """:func:`measured_on` for each ``{bench name: live timings}``; names are slugged
    (``"D = 10"`` is stored as ``d-10``)."""
    return MeasuredOnSet(measured_on(case, slug(name), t, **kwargs) for name, t in live.items())

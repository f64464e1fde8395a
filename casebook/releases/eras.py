"""Era stacks: each bug re-run in the environment where its reporter met it.

A release (``optax==0.1.9``) is one old package on today's jax. An *era* is the whole
stack of the day an issue was reported: the releases of jax, jaxlib, optax, equinox and
diffrax (and their dependencies) that were the newest on PyPI that day, resolved with
``uv pip compile --exclude-newer DATE`` and pinned with sha256 hashes in a lock file per
era, for CPython on Linux x86_64. The era lives in its case's folder, written once:
``casebook/cases/optax_828/case.toml`` names the day (``[issue] opened``) and the Python::

    [era]
    python = "3.12"
    download = { wheels = 12, bytes = 140328779 }

and ``era.txt`` beside it is the lock, the one place its versions are written; ``download``
is what uv measured when the era was locked (``casebook.releases.erasize``). This module
reads those files as data (it imports nothing of :mod:`casebook.cases`, above it).

A run names an era as its target, ``"era:optax-828"`` (``%%on_release era:optax-828``):
``environment`` makes the era an environment like any other target's, its pins the
lock's and its Python the era's, built by ``casebook.releases._envs`` on first use (with
the era's recorded size said first where uv may download).

Standard library only: the set-up command builds the eras before anything else is
importable.
"""

from __future__ import annotations

import dataclasses
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path

from casebook.project import PACKAGE
from casebook.releases._envs import Env
from casebook.releases.errors import ReleaseError, UnknownEra

__all__ = ["ERA_PREFIX", "Era", "history", "load_eras"]
"""The eras' API for pages; the rest (:func:`era_of`, :func:`environment`) serves the
runner and the tests."""

ERA_PREFIX = "era:"
"""A target that starts with this names an era, as in ``"era:optax-828"``."""

CASES_DIR = PACKAGE / "cases"
"""Where the case folders are: each one with an ``[era]`` in its ``case.toml`` is an era."""
LOCK_FILE = "era.txt"
FACTS_FILE = "case.toml"

NOTABLE = ("jax", "jaxlib", "optax", "equinox", "diffrax", "optimistix", "lineax", "chex", "numpy")
"""The packages an era names, in this order, where its lock pins them."""


@dataclasses.dataclass(frozen=True)
class Era:
    """The stack of the day an issue was reported: its lock, its Python, its versions (the
    lock's ``NOTABLE`` pins), and what installing it downloads (wheels and bytes, for
    CPython on Linux x86_64, as uv measured them; 0 where nothing was recorded)."""

    name: str
    reported: str
    issue: str
    python: str
    lock: Path
    packages: Mapping[str, str]
    download_wheels: int = 0
    download_bytes: int = 0

    @property
    def spec(self) -> str:
        return ERA_PREFIX + self.name

    def __str__(self) -> str:
        versions = ", ".join(f"{k} {v}" for k, v in self.packages.items())
        return f"{self.spec} ({self.reported}: {versions})"


def load_eras(path: Path | None = None) -> dict[str, Era]:
    """The eras of the book, ``{"optax-828": Era, ...}``: one per case folder whose facts
    file has an ``[era]`` table. ``path`` (or ``CASEBOOK_MANIFEST``) names instead one
    TOML file of ``[era."NAME"]`` tables with ``reported``, ``issue``, ``python`` and
    ``lock`` (how the tests describe a synthetic era)."""
    named = path or os.environ.get("CASEBOOK_MANIFEST")
    if named:
        return _eras_of_file(Path(named))
    eras = {}
    for facts_file in sorted(CASES_DIR.glob(f"*/{FACTS_FILE}")):
        with open(facts_file, "rb") as f:
            facts = tomllib.load(f)
        if "era" not in facts:
            continue
        if "packages" in facts["era"]:
            raise ReleaseError(f"{facts_file}: [era] packages: era.txt holds the versions")
        name = facts_file.parent.name.replace("_", "-")
        eras[name] = Era(
            name=name,
            reported=facts["issue"]["opened"],
            issue=facts["issue"]["url"],
            python=facts["era"]["python"],
            lock=facts_file.parent / LOCK_FILE,
            packages=_versions(facts_file.parent / LOCK_FILE),
            **_download(facts["era"]),
        )
    return eras


def _eras_of_file(path: Path) -> dict[str, Era]:
    with open(path, "rb") as f:
        data = tomllib.load(f)
    eras = {}
    for name, entry in data.get("era", {}).items():
        lock = Path(entry["lock"])
        eras[name] = Era(
            name=name,
            reported=entry["reported"],
            issue=entry["issue"],
            python=entry["python"],
            lock=path.parent / lock,
            packages=_versions(path.parent / lock),
            **_download(entry),
        )
    return eras


def _download(table: Mapping) -> dict[str, int]:
    """The :class:`Era` fields of an ``[era]`` table's ``download`` (absent: none)."""
    recorded = table.get("download", {})
    return {f"download_{key}": recorded.get(key, 0) for key in ("wheels", "bytes")}


def _versions(lock: Path) -> dict[str, str]:
    """The ``NOTABLE`` pins of an era's lock (uv writes names normalized, unmarked)."""
    pins = dict(re.findall(r"^([a-z0-9-]+)==([^\s\\]+)", lock.read_text(), re.M))
    return {name: pins[name] for name in NOTABLE if name in pins}


def history(requires: tuple[str, ...] = (), eras: Mapping[str, Era] | None = None) -> list[str]:
    """The era targets whose stacks hold every package of ``requires``, oldest jax first:
    the rows of a message history over jax releases (add ``"current"`` for today's).

    >>> history(("diffrax",))[-1]  # the newest jax among the eras that hold diffrax
    'era:optimistix-129'
    """
    eras = load_eras() if eras is None else eras
    chosen = [e for e in eras.values() if all(p in e.packages for p in requires)]
    chosen.sort(key=lambda e: tuple(int(x) for x in e.packages["jax"].split(".")[:3]))
    return [e.spec for e in chosen]


def era_of(target: str, eras: Mapping[str, Era] | None = None) -> Era:
    """The :class:`Era` a target names; :class:`UnknownEra` lists the known ones."""
    eras = load_eras() if eras is None else eras
    name = target.removeprefix(ERA_PREFIX)
    if name not in eras:
        known = ", ".join(ERA_PREFIX + k for k in eras) or "none"
        raise UnknownEra(f"{target!r} is not an era of the manifest; known eras: {known}")
    return eras[name]


def environment(era: Era | str) -> Env:
    """The environment of an era (or of the era a target names, :func:`era_of`): its
    lock's pins, built with the era's Python."""
    era = era_of(era) if isinstance(era, str) else era
    return Env(era.spec, era.python, era.lock.read_text(), era.lock.name, _size(era))


def _size(era: Era) -> str:
    """What building the era downloads: the recorded size, or that none is."""
    if not era.download_bytes:
        return "its wheels (no size recorded for it)"
    return (
        f"about {era.download_bytes / 1e6:.0f} MB ({era.download_wheels} wheels; "
        f"less where uv's cache holds some)"
    )

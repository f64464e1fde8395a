"""Installing on first use, for Colab: what a run needs, downloaded when it first needs it.

The set-up command fetches every historical wheel and builds every era stack up front, and
a run that finds one missing fails with the command that fixes it, so a test run never
touches the network. A page opened in Colab cannot wait for all of that (five era stacks
are about 760 MB) and needs little of it (most pages run one era, the lessons page none).
Its set-up cell sets ``CASEBOOK_ON_DEMAND=1`` instead (:data:`ON_DEMAND_ENV`); then

- a historical optax wheel missing from the cache is fetched, with the manifest's hash,
  by the first run that names it (:func:`casebook.releases._manifest.locate`);
- an era stack missing from the cache is downloaded by the first run that names it:
  :func:`choose` picks, for each pin of the era's lock, the wheel pip would pick on this
  machine for the era's Python, among the files PyPI lists with a hash the lock names;
  :func:`download` prints how many megabytes that is, then fetches them with a progress
  bar (tqdm, where it is installed: Colab has it) and checks every sha256; the era's
  venv is then installed from those files alone (:func:`casebook.releases.eras.ensure`).

Standard library only, except ``packaging`` (wheel tags) and ``tqdm`` (the bar), imported
when an era is downloaded; both come with the ``eras`` extra.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import urllib.request
from collections.abc import Callable, Iterable
from pathlib import Path

from casebook.releases._manifest import sha256_of
from casebook.releases.errors import HashMismatch, ReleaseError

__all__ = ["ON_DEMAND_ENV", "INDEX", "Wheel", "choose", "download", "enabled", "pins"]

ON_DEMAND_ENV = "CASEBOOK_ON_DEMAND"
"""Set to ``1`` (the Colab set-up cell does) to download what a run needs on first use."""

INDEX = "https://pypi.org/simple"
"""PyPI's simple index, read as JSON (PEP 691, sizes from PEP 700): ``INDEX/<name>/``
lists every file of a project, with its sha256, size and address."""

_PIN = re.compile(
    r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)((?:\s*\\\s*\n\s*--hash=sha256:[0-9a-f]{64})+)", re.M
)


def enabled() -> bool:
    """Whether this process may download what a run needs (:data:`ON_DEMAND_ENV`)."""
    return os.environ.get(ON_DEMAND_ENV, "") not in ("", "0")


@dataclasses.dataclass(frozen=True)
class Wheel:
    """One file to download: the pin it serves, where it is, its size and its hash."""

    name: str
    version: str
    filename: str
    url: str
    size: int
    sha256: str


def pins(lock: Path) -> list[tuple[str, str, frozenset[str]]]:
    """``(name, version, sha256s)`` of every pin of a hashed lock file."""
    found = [
        (name, version, frozenset(re.findall(r"sha256:([0-9a-f]{64})", hashes)))
        for name, version, hashes in _PIN.findall(lock.read_text())
    ]
    if not found:
        raise ReleaseError(f"{lock}: no hashed pins (`name==version --hash=sha256:...`)")
    return found


def _files(name: str) -> list[dict]:
    request = urllib.request.Request(
        f"{INDEX}/{name}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"}
    )
    with urllib.request.urlopen(request, timeout=60) as reply:
        return json.load(reply)["files"]


def choose(lock: Path, python: str, *, files: Callable[[str], list[dict]] = _files) -> list[Wheel]:
    """For each pin of ``lock``, the wheel pip would install with CPython ``python``
    (``"3.12"``) on this machine: among the project's files on PyPI whose sha256 the lock
    names for that pin, the one whose tags come first in ``packaging``'s order of
    preference. :class:`ReleaseError` names a pin that has none."""
    from packaging.tags import compatible_tags, cpython_tags
    from packaging.utils import parse_wheel_filename

    version = tuple(int(p) for p in python.split(".")[:2])
    rank = {str(t): i for i, t in enumerate([*cpython_tags(version), *compatible_tags(version)])}
    chosen = []
    for name, pinned, hashes in pins(lock):
        best: tuple[int, dict] | None = None
        for f in files(name):
            if not f["filename"].endswith(".whl") or f["hashes"].get("sha256") not in hashes:
                continue
            tags = parse_wheel_filename(f["filename"])[3]
            score = min((rank.get(str(t), len(rank)) for t in tags), default=len(rank))
            if score < len(rank) and (best is None or score < best[0]):
                best = (score, f)
        if best is None:
            raise ReleaseError(
                f"{lock.name}: no wheel of {name}=={pinned} with a hash of the lock fits "
                f"CPython {python} on this machine"
            )
        f = best[1]
        chosen.append(
            Wheel(name, pinned, f["filename"], f["url"], f["size"], f["hashes"]["sha256"])
        )
    return chosen


def _bar(total: int, label: str):  # noqa: ANN202 - tqdm's type, or the stand-in's
    try:
        import ipywidgets  # noqa: F401  (Colab and Jupyter with widgets: a widget bar)
        from tqdm.auto import tqdm
    except ImportError:
        try:  # a text bar (tqdm.auto would warn that widgets are missing)
            from tqdm import tqdm
        except ImportError:
            return _NoBar()
    return tqdm(total=total, unit="B", unit_scale=True, desc=label)


class _NoBar:
    """What :func:`download` updates where tqdm is not installed: nothing."""

    def __enter__(self) -> _NoBar:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def update(self, n: int) -> None:
        return None


def download(
    wheels: Iterable[Wheel], dest: Path, label: str, *, log: Callable[[str], object] = print
) -> list[Path]:
    """Download ``wheels`` into ``dest`` (those already there with the right hash are
    kept), after printing how many megabytes that is, with a progress bar; every file's
    sha256 is checked (:class:`HashMismatch`). Returns the files, in order."""
    dest.mkdir(parents=True, exist_ok=True)
    wheels = list(wheels)
    todo = [
        w
        for w in wheels
        if not ((dest / w.filename).exists() and sha256_of(dest / w.filename) == w.sha256)
    ]
    size = sum(w.size for w in todo)
    log(
        f"casebook: {label}: {len(todo)} of {len(wheels)} wheels to download, "
        f"{size / 1e6:.0f} MB (once per session; later runs reuse them)"
    )
    with _bar(size, label) as bar:
        for w in todo:
            part = dest / f"{w.filename}.partial"
            digest = hashlib.sha256()
            with urllib.request.urlopen(w.url, timeout=120) as reply, part.open("wb") as out:
                for block in iter(lambda: reply.read(1 << 20), b""):
                    out.write(block)
                    digest.update(block)
                    bar.update(len(block))
            if digest.hexdigest() != w.sha256:
                part.unlink(missing_ok=True)
                raise HashMismatch(
                    f"{w.filename}: sha256 {digest.hexdigest()}, the lock says {w.sha256}"
                )
            part.rename(dest / w.filename)
    return [dest / w.filename for w in wheels]

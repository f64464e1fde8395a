"""The manifest of historical releases, the cache they are fetched into, and fetching.

The releases are listed once, with the sha256 of their wheels, in ``manifest.toml``.
:func:`fetch` (``python3 -m casebook setup``) downloads exactly those wheels with pip
(which enforces the hashes), verifies them again and unpacks them into the cache;
:func:`locate` finds an unpacked release for a run. Nothing is downloaded at run time,
and every error names the command that fixes it, except on demand (:func:`on_demand`: a
page in Colab), where :func:`locate` fetches a missing wheel the same way, by its first run.

Standard library only: ``python3 -m casebook setup`` imports this before anything else is
installed.
"""

from __future__ import annotations

import compileall
import dataclasses
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from casebook import storage
from casebook.project import ROOT
from casebook.releases.errors import HashMismatch, ReleaseError, ReleaseNotCached, UnknownRelease

REPO_ROOT = ROOT
"""The directory that holds the ``casebook`` package: the clone, or site-packages."""
MANIFEST = Path(__file__).resolve().parent / "manifest.toml"
SETUP_COMMAND = "python3 -m casebook setup"
ON_DEMAND_ENV = "CASEBOOK_ON_DEMAND"
"""Set to ``1`` (a page's set-up cell does, in Colab) to download what a run needs on
first use: a historical wheel here, an era stack in :mod:`casebook.releases.eras`."""


@dataclasses.dataclass(frozen=True)
class Release:
    """One historical release: a pure-Python wheel pinned by its sha256."""

    package: str
    version: str
    wheel: str
    sha256: str
    why: str = ""

    @property
    def spec(self) -> str:
        return f"{self.package}=={self.version}"

    def __str__(self) -> str:
        return self.spec


# ------------------------------------------------------------------------- the cache


def running_from_checkout() -> bool:
    """Whether ``casebook`` is imported from a clone of the book (editable install or
    ``python3 -m casebook`` in the clone), rather than installed as a package."""
    return (REPO_ROOT / "pyproject.toml").is_file() and (REPO_ROOT / "notebooks").is_dir()


def cache_dir() -> Path:
    """Where fetched wheels live: ``$CASEBOOK_CACHE`` if set; ``.casebook-cache/`` in the
    clone when run from one; otherwise this platform's per-user cache (platformdirs:
    ``$XDG_CACHE_HOME/casebook``, ``~/Library/Caches/casebook``, ``%LOCALAPPDATA%\\casebook\\Cache``),
    so an installed ``casebook`` never writes into site-packages."""
    if os.environ.get("CASEBOOK_CACHE"):
        return Path(os.environ["CASEBOOK_CACHE"])
    if running_from_checkout():
        return REPO_ROOT / ".casebook-cache"
    # Imported here, not at the top: this module is also imported inside the era stacks'
    # interpreters (the release runner's child), which hold only the era's packages.
    import platformdirs

    return Path(platformdirs.user_cache_dir("casebook", appauthor=False))


def unpacked_dir(rel: Release, cache: Path) -> Path:
    """Where ``rel`` is (or will be) unpacked inside ``cache``."""
    return cache / "releases" / f"{rel.package}-{rel.version}"


def _marker(rel: Release, cache: Path) -> Path:
    """The file that records the sha256 of the wheel an unpacked release came from."""
    return unpacked_dir(rel, cache) / ".casebook-sha256"


def _unpack(rel: Release, wheel: Path, cache: Path) -> None:
    """Unpack ``wheel`` into a scratch directory, compile its modules (as an installer
    does: a server that imports the release then reads bytecode), and rename it into place
    with its marker, so a full disk or a kill mid-way leaves no half release in the cache."""
    target = unpacked_dir(rel, cache)
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        with zipfile.ZipFile(wheel) as zf:
            zf.extractall(scratch)
        compileall.compile_dir(scratch, quiet=2, ddir=str(target))
        storage.write_text(scratch / _marker(rel, cache).name, rel.sha256)
        shutil.rmtree(target, ignore_errors=True)
        scratch.rename(target)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def is_unpacked(rel: Release, cache: Path) -> bool:
    """Whether ``cache`` holds ``rel`` unpacked from a wheel with the manifest's hash."""
    marker = _marker(rel, cache)
    return marker.exists() and marker.read_text().strip() == rel.sha256


# -------------------------------------------------------------------------- manifest


def load_manifest(path: Path | None = None) -> dict[str, Release]:
    """Read the manifest into ``{"optax==0.1.9": Release, ...}``."""
    path = Path(path or os.environ.get("CASEBOOK_MANIFEST") or MANIFEST)
    with open(path, "rb") as f:
        data = tomllib.load(f)
    releases = {}
    for entry in data.get("release", []):
        rel = Release(**entry)
        if not re.fullmatch(r"[0-9a-f]{64}", rel.sha256):
            raise ValueError(f"{path}: {rel.spec} has a malformed sha256 {rel.sha256!r}")
        releases[rel.spec] = rel
    return releases


def parse_spec(spec: str) -> tuple[str, str]:
    """``"optax==0.1.9"`` -> ``("optax", "0.1.9")``, with a clear error otherwise."""
    m = re.fullmatch(r"\s*([A-Za-z0-9_.-]+)\s*==\s*([A-Za-z0-9_.+-]+)\s*", spec)
    if not m:
        raise UnknownRelease(f"{spec!r} is not a release spec; write it as 'package==version'")
    return m.group(1).lower(), m.group(2)


def resolve(spec: str, manifest: Mapping[str, Release] | None = None) -> Release:
    """The manifest entry for ``spec``, or :class:`UnknownRelease` listing what exists."""
    manifest = load_manifest() if manifest is None else manifest
    package, version = parse_spec(spec)
    key = f"{package}=={version}"
    if key not in manifest:
        known = ", ".join(sorted(manifest)) or "none"
        raise UnknownRelease(
            f"{key} is not in the manifest ({MANIFEST.name}). Known releases: {known}. "
            f"Add it there with its wheel's sha256, then run `{SETUP_COMMAND}`."
        )
    return manifest[key]


def on_demand() -> bool:
    """Whether this process may download what a run needs (:data:`ON_DEMAND_ENV`); off
    (the test suite, a clone), a missing release or era fails, naming the set-up step."""
    return os.environ.get(ON_DEMAND_ENV, "") not in ("", "0")


def sha256_of(path: Path) -> str:
    """The sha256 of a file, read in blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# ----------------------------------------------------------------------------- fetch


def _pip_download(rel: Release, dest: Path, pip_args: Sequence[str]) -> None:
    """Download exactly this wheel with pip, which also enforces the manifest's hash."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as req:
        req.write(f"{rel.spec} --hash=sha256:{rel.sha256}\n")
    try:
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary",
            ":all:",
            "--require-hashes",
            "--disable-pip-version-check",
            "-q",
            "-d",
            str(dest),
            "-r",
            req.name,
            *pip_args,
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True)
    finally:
        os.unlink(req.name)
    if proc.returncode != 0:
        if "DO NOT MATCH THE HASHES" in proc.stderr:
            raise HashMismatch(
                f"pip refused {rel.wheel}: its hash differs from the manifest's "
                f"{rel.sha256}:\n{proc.stderr}"
            )
        raise ReleaseError(f"pip could not download {rel.spec} ({' '.join(cmd)}):\n{proc.stderr}")


def fetch(
    specs: Iterable[str] | None = None,
    *,
    cache: Path | None = None,
    manifest: Mapping[str, Release] | None = None,
    pip_args: Sequence[str] = (),
    log: Callable[[str], object] = print,
) -> list[Path]:
    """Download, verify and unpack the manifest's wheels (all, or ``specs``). Idempotent.

    A release already unpacked with the manifest's hash is skipped; a wheel already in
    the cache is re-verified rather than downloaded again. Returns the unpacked dirs.
    """
    manifest = load_manifest() if manifest is None else manifest
    cache = Path(cache or cache_dir())
    rels = [resolve(s, manifest) for s in specs] if specs is not None else list(manifest.values())
    wheels = cache / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)

    missing = [r for r in rels if not (wheels / r.wheel).exists() and not is_unpacked(r, cache)]
    if missing:
        log(f"casebook: downloading {len(missing)} wheel(s): {', '.join(r.spec for r in missing)}")
        for rel in missing:  # one call each: pip resolves one version per package per call
            _pip_download(rel, wheels, pip_args)

    out = []
    for rel in rels:
        if not is_unpacked(rel, cache):
            wheel = wheels / rel.wheel
            if not wheel.exists():
                raise ReleaseNotCached(
                    f"{rel.spec}: expected {wheel} after download; it is missing"
                )
            got = sha256_of(wheel)
            if got != rel.sha256:
                raise HashMismatch(
                    f"{wheel.name}: sha256 {got} but the manifest says {rel.sha256}. "
                    f"Delete the file and run `{SETUP_COMMAND}` again."
                )
            _unpack(rel, wheel, cache)
        out.append(unpacked_dir(rel, cache))
    log(f"casebook: {len(out)} release(s) ready in {cache}")
    return out


def locate(
    spec: str, *, cache: Path | None = None, manifest: Mapping[str, Release] | None = None
) -> Path:
    """The unpacked directory of a fetched release, ready to go first on ``PYTHONPATH``."""
    rel = resolve(spec, manifest)
    cache = Path(cache or cache_dir())
    marker = _marker(rel, cache)
    if not marker.exists() and on_demand():
        fetch([rel.spec], cache=cache, manifest=manifest)
    if not marker.exists():
        raise ReleaseNotCached(
            f"{rel.spec} is in the manifest but not in the cache ({cache}). "
            f"Run the set-up step: `{SETUP_COMMAND}` (both README commands run it)."
        )
    recorded = marker.read_text().strip()
    if recorded != rel.sha256:
        raise HashMismatch(
            f"the cache holds {rel.spec} with sha256 {recorded}, but the manifest says "
            f"{rel.sha256}. Run `{SETUP_COMMAND}` to replace it."
        )
    return unpacked_dir(rel, cache)


@dataclasses.dataclass(frozen=True)
class Located:
    """A fetched release, found: its manifest entry, its unpacked directory and the cache
    that holds it."""

    release: Release
    directory: Path
    cache: Path


def release_dir(spec: str) -> Located:
    """Everything a run on ``spec`` needs from the manifest, in one call: the entry, the
    unpacked directory (:func:`locate`) and the cache. :class:`UnknownRelease` or
    :class:`ReleaseNotCached` as :func:`locate` raises them."""
    cache = cache_dir()
    return Located(resolve(spec), locate(spec, cache=cache), cache)

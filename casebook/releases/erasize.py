"""Each era's download size, measured by uv when the era is locked, and kept as data.

Where a page builds its era on first use (Colab), it says first how much that downloads
(:func:`casebook.releases._envs.ensure`). That figure is not worked out at run time, which
would mean choosing each pin's wheel as an installer does: uv measures it here, once, from
the resolution that wrote the lock. ``uv pip compile --format pylock.toml`` for the era's
Python on Linux x86_64 (the platform the lock is for) names the one wheel of each pin uv
installs there, with its size as PyPI lists it. :func:`measure` checks that those wheels
are the lock's (the same pins, each wheel's sha256 among its pin's hashes) and sums them;
:func:`record` writes the result into the ``[era]`` table of the case's ``case.toml``::

    download = { wheels = 12, bytes = 140328779 }

``python -m casebook.releases.erasize [KEY ...]`` does both for every era (or those named),
with network; run it after locking an era (CONTRIBUTING.md). Without network, the tests
check that each record counts the wheels of its lock.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from casebook import storage
from casebook.releases import _envs, eras
from casebook.releases._targets import normal
from casebook.releases.errors import ReleaseError

PLATFORM = "x86_64-manylinux_2_28"
"""The platform the era locks are resolved for (``uv pip compile --python-platform``)."""

_PIN = re.compile(r"^([A-Za-z0-9][\w.-]*)==(\S+)((?:[ \t]*\\\n[ \t]*--hash=sha256:\w+)+)", re.M)
_REQUIREMENTS = re.compile(r"^# \(\S+\.in: ([^;]+);", re.M)
_BY = "measured: python -m casebook.releases.erasize"


@dataclasses.dataclass(frozen=True)
class Download:
    """What installing an era downloads: its number of wheels and their bytes."""

    wheels: int
    bytes: int


def pins(lock: str) -> dict[str, tuple[str, frozenset[str]]]:
    """``{name: (version, sha256s)}`` of the hashed pins of a lock's text."""
    return {
        normal(name): (version, frozenset(re.findall(r"sha256:(\w+)", hashes)))
        for name, version, hashes in _PIN.findall(lock)
    }


def measure(pylock: str, lock: str) -> Download:
    """The wheels a ``pylock.toml`` (uv's, for one platform) names, counted and summed,
    after checking that they are the lock's: :class:`ReleaseError` names a package whose
    version or wheel the lock does not pin, or a pin it does not cover."""
    pinned = pins(lock)
    sizes: dict[str, int] = {}
    for package in tomllib.loads(pylock)["packages"]:
        name, wheels = normal(package["name"]), package.get("wheels", [])
        if len(wheels) != 1:
            raise ReleaseError(f"{name}: uv names {len(wheels)} wheels for {PLATFORM}, not 1")
        version, hashes = pinned.get(name, ("", frozenset()))
        if package["version"] != version or wheels[0]["hashes"]["sha256"] not in hashes:
            raise ReleaseError(
                f"{name}=={package['version']}: not a pin of the lock with this wheel's "
                f"sha256; lock the era again"
            )
        sizes[name] = wheels[0]["size"]
    if missing := sorted(set(pinned) - set(sizes)):
        raise ReleaseError(f"the lock pins {', '.join(missing)}, which uv does not install")
    return Download(len(sizes), sum(sizes.values()))


def _pylock(era: eras.Era) -> str:
    """uv's ``pylock.toml`` for the era: its lock's requirements (the ``.in`` its header
    names), resolved as that lock was, for :data:`PLATFORM`."""
    found = _REQUIREMENTS.search(era.lock.read_text())
    uv = _envs.uv()
    if not found or not uv:
        raise ReleaseError(f"{era.lock}: no `(KEY.in: ...; uv ...)` header line, or no uv")
    with tempfile.TemporaryDirectory() as tmp:
        requirements, out = Path(tmp) / f"{era.name}.in", Path(tmp) / "pylock.toml"
        requirements.write_text("\n".join(found.group(1).split()) + "\n")
        command = [uv, "pip", "compile", str(requirements), "--quiet", "--no-header"]
        command += ["--python-version", era.python, "--python-platform", PLATFORM]
        command += ["--exclude-newer", f"{era.reported}T23:59:59Z"]
        subprocess.run([*command, "--format", "pylock.toml", "-o", str(out)], check=True)
        return out.read_text()


def record(facts: Path, download: Download) -> None:
    """Write ``download`` into the ``[era]`` table of ``facts`` (a ``case.toml``): its
    ``download =`` line replaced, or one added after its ``python =`` line."""
    text = facts.read_text()
    line = f"download = {{ wheels = {download.wheels}, bytes = {download.bytes} }}  # {_BY}"
    era_start = text.index("\n[era]\n")
    head, era = text[:era_start], text[era_start:]
    if re.search(r"^download = .*$", era, re.M):
        era = re.sub(r"^download = .*$", line, era, count=1, flags=re.M)
    else:
        era = re.sub(r"^(python = .*)$", rf"\1\n{line}", era, count=1, flags=re.M)
    storage.write_atomic(facts, head + era)


def main(argv: list[str] | None = None) -> None:
    """Measure and record the download of every era, or of the eras named (``optax-828``)."""
    known = eras.load_eras()
    for name in (sys.argv[1:] if argv is None else argv) or list(known):
        era = known[name]
        download = measure(_pylock(era), era.lock.read_text())
        record(era.lock.parent / eras.FACTS_FILE, download)
        print(f"{era.spec}: {download.wheels} wheels, {download.bytes / 1e6:.1f} MB")


if __name__ == "__main__":
    main()

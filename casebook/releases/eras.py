"""Era stacks: each bug re-run in the environment where its reporter met it.

An overlay (``optax==0.1.9``) puts one old package on today's jax. An *era* is the whole
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

A run names an era as its target, ``"era:optax-828"`` (``%%on_release era:optax-828``).
``ensure`` builds the era's venv on first use, under the cache (``eras/KEY``), with
an interpreter of the era's Python (``find_python``), in one way everywhere:
``uv pip install --require-hashes --no-deps -r era.txt`` (uv checks each wheel's hash and
keeps it in its cache, shared by all eras and clones). Where it may download (the set-up,
:func:`ensure_all`; a page in Colab, ``casebook.releases._manifest.on_demand``), the
era's recorded size is printed first; anywhere else uv runs ``--offline``, so an era whose
wheels are not cached fails at once, naming ``python3 -m casebook setup``. A venv is built
in a scratch directory and renamed into place only when complete.

Standard library only: the set-up command builds the eras before anything else is
importable, and an era's own interpreter imports this package's child program.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import shutil
import subprocess
import sys
import threading
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path

from casebook import storage
from casebook.project import PACKAGE, ROOT
from casebook.releases._manifest import cache_dir, on_demand
from casebook.releases.errors import (
    EraBuildFailed,
    EraPythonMissing,
    HashMismatch,
    ReleaseError,
    ReleaseNotCached,
    UnknownEra,
)

__all__ = ["ERA_PREFIX", "Era", "ensure_all", "history", "load_eras"]
"""The eras' API for pages; the rest (:func:`place_of`, :func:`ensure`, ...) serves the
runner and the tests."""

ERA_PREFIX = "era:"
"""A target that starts with this names an era, as in ``"era:optax-828"``."""

CASES_DIR = PACKAGE / "cases"
"""Where the case folders are: each one with an ``[era]`` in its ``case.toml`` is an era."""
LOCK_FILE = "era.txt"
FACTS_FILE = "case.toml"

_STAMP = ".casebook-era"

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

    @property
    def digest(self) -> str:
        """The sha256 of the lock file (a venv built from another lock is rebuilt)."""
        return hashlib.sha256(self.lock.read_bytes()).hexdigest()

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


def venv_dir(era: Era, cache: Path | None = None) -> Path:
    """Where the era's venv lives: ``<cache>/eras/<name>``."""
    return (cache or cache_dir()) / "eras" / era.name


def _runs(python: str | Path, version: str) -> bool:
    argv = [str(python), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"]
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and out.stdout.strip() == version


def _pyenv_roots() -> list[Path]:
    roots = [os.environ.get("PYENV_ROOT"), str(Path.home() / ".pyenv")]
    pyenv = shutil.which("pyenv")
    if pyenv:
        out = subprocess.run([pyenv, "root"], capture_output=True, text=True)
        roots.insert(0, out.stdout.strip())
    return [Path(r) for r in dict.fromkeys(r for r in roots if r)]


def uv() -> str | None:
    """The uv executable: beside this interpreter, in the checkout's .venv, or on PATH."""
    beside = [Path(sys.executable).parent / "uv", ROOT / ".venv" / "bin" / "uv"]
    return next((str(p) for p in beside if p.exists()), None) or shutil.which("uv")


def find_python(version: str) -> str:
    """An interpreter of Python ``version`` (``"3.12"``): on PATH, from pyenv, or from uv
    (found, or installed: that needs internet access to uv's Python builds). Raises
    :class:`EraPythonMissing`, naming what to install, when there is none."""
    candidates: list[str | Path] = [f"python{version}"]
    for root in _pyenv_roots():
        candidates += sorted((root / "versions").glob(f"{version}*/bin/python{version}"))
    for candidate in candidates:
        found = shutil.which(str(candidate)) if isinstance(candidate, str) else candidate
        if found and _runs(found, version):
            return str(found)
    uv_path = uv()
    if uv_path:
        for command in (["python", "find", version], ["python", "install", version]):
            try:
                subprocess.run([uv_path, *command], capture_output=True, text=True, timeout=300)
            except subprocess.TimeoutExpired:
                continue
            out = subprocess.run(
                [uv_path, "python", "find", version], capture_output=True, text=True
            )
            if out.returncode == 0 and _runs(out.stdout.strip(), version):
                return out.stdout.strip()
    raise EraPythonMissing(
        f"the era stacks need Python {version} (their jaxlib wheels are built for it), and "
        f"none was found on PATH, through pyenv or through uv. Install one, e.g. "
        f"`pyenv install {version}`, `uv python install {version}` or your system's "
        f"python{version} package, then run the set-up again."
    )


_locks: dict[str, threading.Lock] = {}
_locks_lock = threading.Lock()


def _lock_of(name: str) -> threading.Lock:
    with _locks_lock:
        return _locks.setdefault(name, threading.Lock())


FIX_COMMAND = "python3 -m casebook setup"
"""What rebuilds a stale or broken era (once): the set-up's last step."""


def ensure(
    era: Era,
    *,
    cache: Path | None = None,
    log: Callable[[str], None] = print,
    retry: bool = False,
    online: bool | None = None,
) -> Path:
    """The interpreter of the era's venv, built first if it is missing or stale.

    ``online`` (by default: on demand, :func:`casebook.releases._manifest.on_demand`) lets
    uv download; then the era's size is printed first. Offline, an era whose wheels are
    not all in uv's cache raises :class:`ReleaseNotCached`, naming the set-up step, and
    records no failure (that step, or going online, builds it).

    A venv is stale when its stamp names another lock (the lock changed), and missing
    when a build was interrupted (it builds in a scratch directory, renamed only when
    complete; scratch directories of dead processes are removed here). Either is rebuilt
    once. A build that fails leaves a record (``<venv>.failed``, with the lock's digest
    and the error); later calls with the same lock raise :class:`EraBuildFailed` at once,
    naming the command that tries again (``retry=True``, as the set-up does), instead of
    downloading and failing on every run.
    """
    final = venv_dir(era, cache)
    python = final / "bin" / "python"
    stamp = final / _STAMP
    failed = final.with_name(f"{final.name}.failed")
    with _lock_of(era.name):
        if stamp.exists() and stamp.read_text().strip() == era.digest and python.exists():
            return python
        _sweep_partial(final)
        if failed.exists() and not retry:
            digest, _, reason = failed.read_text().partition("\n")
            if digest == era.digest:
                raise EraBuildFailed(
                    f"{era.spec} failed to build from {era.lock.name} and was not tried "
                    f"again:\n{reason.strip()[-1500:]}\nFix the cause, then run "
                    f"`{FIX_COMMAND}`, which tries once more."
                )
        base = find_python(era.python)
        scratch = final.with_name(f"{final.name}.partial-{os.getpid()}")
        shutil.rmtree(scratch, ignore_errors=True)
        online = on_demand() if online is None else online
        log(f"casebook: building the era {era} with Python {era.python}")
        if online:
            log(f"casebook: {era.spec}: downloading {_size(era)} ...")
        try:
            _build(era, base, scratch, log if online else None)
            storage.write_text(scratch / _STAMP, era.digest)
            shutil.rmtree(final, ignore_errors=True)
            scratch.rename(final)
            failed.unlink(missing_ok=True)
        except ReleaseNotCached:
            raise
        except (ReleaseError, OSError, subprocess.SubprocessError) as error:
            final.parent.mkdir(parents=True, exist_ok=True)
            storage.write_text(failed, f"{era.digest}\n{type(error).__name__}: {error}")
            raise
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return python


def _sweep_partial(final: Path) -> None:
    """Remove scratch builds (``<venv>.partial-<pid>``) whose process is gone: what an
    interrupted set-up (Ctrl-C, a kill) left behind."""
    for scratch in final.parent.glob(f"{final.name}.partial-*"):
        pid = scratch.name.rpartition("-")[2]
        if pid.isdigit() and int(pid) != os.getpid() and not storage.process_alive(int(pid)):
            shutil.rmtree(scratch, ignore_errors=True)


def ensure_all(
    eras: Mapping[str, Era] | None = None, *, workers: int = 3, log: Callable[[str], None] = print
) -> list[Path]:
    """Build every era's venv that is missing or stale, ``workers`` at a time (the set-up
    command's last step); the interpreters, in the manifest's order."""
    import concurrent.futures
    import time

    eras = load_eras() if eras is None else eras
    t0 = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        pythons = list(
            pool.map(lambda era: ensure(era, log=log, retry=True, online=True), eras.values())
        )
    log(f"casebook: {len(pythons)} era stack(s) ready in {time.perf_counter() - t0:.0f} s")
    return pythons


def _size(era: Era) -> str:
    """What :func:`ensure` says it downloads: the recorded size, or that none is."""
    if not era.download_bytes:
        return "its wheels (no size recorded for it)"
    return (
        f"about {era.download_bytes / 1e6:.0f} MB ({era.download_wheels} wheels; "
        f"less where uv's cache holds some)"
    )


def writes_bytecode() -> bool:
    """Whether the era's runs write the bytecode of what they import: they start with this
    process's environment, and ``PYTHONDONTWRITEBYTECODE`` is unset there (as in Colab)."""
    return not os.environ.get("PYTHONDONTWRITEBYTECODE")


def install_command(uv_path: str, era: Era, venv: Path, *, online: bool) -> list[str]:
    """The one command that installs an era, on every path: uv installs the hashed lock
    into ``venv``, choosing each pin's wheel for its Python and platform. Where the runs
    will not write bytecode (:func:`writes_bytecode`), uv compiles all of it now, so no
    run imports jax from source; elsewhere the first run writes the bytecode of what it
    imports, a fraction of the era's modules, instead of waiting for all of them.
    ``online``, it may download and trusts the system's certificates (as pip trusts its
    configured ones); otherwise it reads its cache only (``--offline``)."""
    command = [uv_path, "pip", "install", "--python", str(venv / "bin" / "python")]
    command += [] if writes_bytecode() else ["--compile-bytecode"]
    command += ["--system-certs" if online else "--offline"]
    return [*command, "--require-hashes", "--no-deps", "-r", str(era.lock)]


def _build(era: Era, base: str, venv: Path, say: Callable[[str], None] | None) -> None:
    """Make the venv at ``venv`` and install the era's lock into it
    (:func:`install_command`): online where ``say`` is given, which receives uv's lines as
    uv prints them."""
    uv_path = uv()
    if uv_path is None:
        raise ReleaseError(f"building {era.spec} needs uv: `pip install uv` (the eras extra)")
    subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True)
    command = install_command(uv_path, era, venv, online=say is not None)
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    for line in proc.stdout or ():
        lines.append(line)
        if say and line.strip():
            say(f"  uv: {line.rstrip()}")
    if proc.wait() == 0:
        return
    output = "".join(lines)
    _raise_on_hash(era, output)
    if not say:
        raise ReleaseNotCached(
            f"{era.spec} is not built, and uv's cache lacks wheels of {era.lock.name} "
            f"(nothing is downloaded here). Run `{FIX_COMMAND}` (both README commands run "
            f"it), which downloads {_size(era)}.\n{output[-1500:]}"
        )
    raise ReleaseError(f"installing {era.spec} failed:\n{output[-3000:]}")


def _raise_on_hash(era: Era, output: str) -> None:
    """A hash mismatch is never retried: it raises :class:`HashMismatch`."""
    lower = output.lower()
    if "hash" in lower and ("mismatch" in lower or "do not match" in lower):
        raise HashMismatch(
            f"an era wheel of {era.spec} does not match the sha256 of {era.lock.name}: "
            f"nothing was installed.\n{output[-2000:]}"
        )


def casebook_path(cache: Path | None = None) -> Path:
    """A directory holding only a link to the ``casebook`` package: an era's runs put it
    on ``PYTHONPATH`` to reach the child program, and nothing of today's stack."""
    path = (cache or cache_dir()) / "eras" / "casebook-path"
    link = path / "casebook"
    if not (link.is_symlink() and link.resolve() == PACKAGE):
        path.mkdir(parents=True, exist_ok=True)
        fresh = path / f".casebook-{os.getpid()}"
        fresh.unlink(missing_ok=True)
        fresh.symlink_to(PACKAGE, target_is_directory=True)
        os.replace(fresh, link)  # atomic: concurrent pages never see a missing link
    return path


@dataclasses.dataclass(frozen=True)
class EraPlace:
    """Where a run in an era happens: the era venv's interpreter, the venv itself (every
    package a run imports must come from it), the directory that links the child program
    (:func:`casebook_path`) and the cache."""

    python: Path
    home: Path
    path: Path
    cache: Path


def place_of(target: str) -> EraPlace:
    """Everything a run on an era target needs, in one call: the era (:func:`era_of`), its
    venv built if missing or stale (:func:`ensure`) and the child program's link."""
    era = era_of(target)
    cache = cache_dir()
    return EraPlace(ensure(era, cache=cache), venv_dir(era, cache), casebook_path(cache), cache)

"""The one way a historical target is placed: an environment built by uv from hashed pins.

Every target but today's stack is an :class:`Env`: pins with their sha256 hashes, the
Python to build it with, and one-line patches to apply after: a release's are today's
stack with the release's pin in its package's place (:mod:`casebook.releases._targets`),
an era's its case's ``era.txt``. :func:`ensure` builds each, on first use, one way::

    uv pip install --require-hashes --no-deps [--offline] -r casebook-requirements.txt

in ``<cache>/envs/NAME-KEY``, ``KEY`` the digest of what it is built from: another set is
another folder, so nothing built goes stale. uv checks each wheel's hash and keeps it in its
cache, shared by every environment and clone (today's stack is there after set-up, so a
release's environment builds offline in about a second). Where it may download (the
set-up, ``casebook.releases.fetch_command``; a page in Colab, :func:`on_demand`) what it downloads is said
first; anywhere else uv runs ``--offline``, so an environment whose wheels are not cached
fails at once, naming ``python3 -m casebook setup``. A build happens in a scratch folder,
renamed into place only when complete.

Standard library only: the set-up command builds the environments before anything else is
importable, and their own interpreters import this package's child program.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

from casebook.project import PACKAGE, REPORTED, ROOT
from casebook.releases.errors import (
    EraBuildFailed,
    EraPythonMissing,
    HashMismatch,
    PatchError,
    ReleaseError,
    ReleaseNotCached,
)
from casebook.storage import process_alive

REPO_ROOT = ROOT
"""The directory that holds the ``casebook`` package: the clone, or site-packages."""
SETUP_COMMAND = "python3 -m casebook setup"
ON_DEMAND_ENV = "CASEBOOK_ON_DEMAND"
"""Set to ``1`` (a page's set-up cell does, in Colab) to download what a run needs on
first use: the environment of a release or an era."""

PINS = "casebook-requirements.txt"
"""The file, in each environment, of the requirement set it was built from."""

THIS_PYTHON = f"{sys.version_info[0]}.{sys.version_info[1]}"


def running_from_checkout() -> bool:
    """Whether ``casebook`` is imported from a clone of the book (editable install or
    ``python3 -m casebook`` in the clone), rather than installed as a package."""
    return (REPO_ROOT / "pyproject.toml").is_file() and (REPO_ROOT / "notebooks").is_dir()


def cache_dir() -> Path:
    """Where the environments live: ``$CASEBOOK_CACHE`` if set; ``.casebook-cache/`` in the
    clone when run from one; otherwise this platform's per-user cache (platformdirs:
    ``$XDG_CACHE_HOME/casebook``, ``~/Library/Caches/casebook``, ``%LOCALAPPDATA%\\casebook\\Cache``),
    so an installed ``casebook`` never writes into site-packages."""
    if os.environ.get("CASEBOOK_CACHE"):
        return Path(os.environ["CASEBOOK_CACHE"])
    if running_from_checkout():
        return REPO_ROOT / ".casebook-cache"
    # Imported here, not at the top: this module is also imported inside the environments'
    # interpreters (the child program's package), which hold only their own packages.
    import platformdirs

    return Path(platformdirs.user_cache_dir("casebook", appauthor=False))


def on_demand() -> bool:
    """Whether this process may download what a run needs (:data:`ON_DEMAND_ENV`); off
    (the test suite, a clone), a missing release or era fails, naming the set-up step."""
    return os.environ.get(ON_DEMAND_ENV, "") not in ("", "0")


@dataclasses.dataclass(frozen=True)
class Patch:
    """Replace one line of one file. ``old`` must match exactly one line (stripped).

    Args:
        path: the file, relative to the release's root (``"optax/_src/wrappers.py"``).
        old: the line to replace, without its indent.
        new: the line that replaces it; it keeps the old line's indent.

    Examples:
        >>> fix = Patch("f.py", "return a + b", "return a - b")
        >>> print(fix.apply("def f(a, b):\\n    return a + b\\n"), end="")
        def f(a, b):
            return a - b
    """

    path: str
    old: str
    new: str

    def apply(self, text: str) -> str:
        """``text`` with the one line equal to ``old`` replaced by ``new`` (indent kept)."""
        lines = text.splitlines(keepends=True)
        hits = [i for i, line in enumerate(lines) if line.strip() == self.old.strip()]
        if len(hits) != 1:
            raise PatchError(
                f"{self.path}: expected exactly one line equal to {self.old.strip()!r}, "
                f"found {len(hits)}"
            )
        i = hits[0]
        indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
        ending = "\n" if lines[i].endswith("\n") else ""
        lines[i] = indent + self.new.strip() + ending
        return "".join(lines)


@dataclasses.dataclass(frozen=True)
class Env:
    """What a target's environment is built from: its ``name`` (the target, as runs and
    messages name it), the Python version, the requirement text uv installs, where its pins
    are written (``source``, for messages), what it downloads (``size``, said before it
    does), the one-line patches applied to it after, the one package it changes in today's
    stack (``package``; None for an era, a whole stack of its own), and what, given the
    installed site-packages, pins what its packages require and its set lacks
    (``complete``: a release may need a package today's stack does not)."""

    name: str
    python: str
    requirements: str
    source: str
    size: str = "its wheels"
    patches: tuple[Patch, ...] = ()
    package: str | None = None
    complete: Callable[[Path], str] | None = dataclasses.field(default=None, compare=False)

    @property
    def key(self) -> str:
        """The digest of everything the environment is built from."""
        patches = [dataclasses.astuple(p) for p in self.patches]
        text = json.dumps([self.python, self.requirements, patches])
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    @property
    def hashed(self) -> bool:
        """Whether every pin carries a hash (all do but those of an installed ``casebook``,
        which has no lock to read them from)."""
        lines = self.requirements.replace("\\\n", " ").splitlines()
        return not any(re.match(r"[A-Za-z0-9]", line) and "--hash" not in line for line in lines)


@dataclasses.dataclass(frozen=True)
class Place:
    """Where a run happens, resolved once per run: its label, the interpreter, the
    directories first on ``PYTHONPATH``, the release's package (None for the current stack
    and eras), the directory each reported package must be imported from, the cache (None
    for ``current``), and whether the place runs today's jax (not an era's)."""

    label: str
    python: str
    path: tuple[Path, ...]
    package: str | None
    homes: Mapping[str, Path]
    cache: Path | None
    todays_jax: bool = True


def place(env: Env) -> Place:
    """Where a run in ``env`` happens, in one call: its interpreter, built if missing
    (:func:`ensure`), with only the link to the child program on the path
    (:func:`casebook_path`) and every package a run imports coming from its
    site-packages."""
    cache = cache_dir()
    python = ensure(env, cache=cache)
    site = site_packages(python.parent.parent)
    homes = {name: site for name in (*REPORTED, env.package or "jax")}
    link = (casebook_path(cache),)
    return Place(env.name, str(python), link, env.package, homes, cache, env.package is not None)


def venv_dir(env: Env, cache: Path | None = None) -> Path:
    """Where the environment lives: ``<cache>/envs/<name>-<key>``."""
    name = re.sub(r"[^A-Za-z0-9.]+", "-", env.name).strip("-")
    return (cache or cache_dir()) / "envs" / f"{name}-{env.key}"


def site_packages(venv: Path) -> Path:
    """The site-packages folder of a venv (every package its runs import is there)."""
    return next(venv.glob("lib/python3*/site-packages"))


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
    """An interpreter of Python ``version`` (``"3.12"``): this one's base, on PATH, from
    pyenv, or from uv (found, or installed: that needs internet access to uv's Python
    builds). Raises :class:`EraPythonMissing`, naming what to install, when there is none."""
    candidates: list[str | Path] = [Path(sys.base_prefix, "bin", f"python{version}")]
    candidates.append(f"python{version}")
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
        f"this environment needs Python {version} (its jaxlib wheels are built for it), and "
        f"none was found on PATH, through pyenv or through uv. Install one, e.g. "
        f"`pyenv install {version}`, `uv python install {version}` or your system's "
        f"python{version} package, then run the set-up again."
    )


_locks: dict[str, threading.Lock] = {}
_locks_lock = threading.Lock()


def _lock_of(name: str) -> threading.Lock:
    with _locks_lock:
        return _locks.setdefault(name, threading.Lock())


def ensure(
    env: Env,
    *,
    cache: Path | None = None,
    log: Callable[[str], None] = print,
    retry: bool = False,
    online: bool | None = None,
) -> Path:
    """The interpreter of the environment, built first if it is missing.

    ``online`` (by default: on demand, :func:`on_demand`) lets uv download; offline, an
    environment whose wheels are not all in uv's cache raises :class:`ReleaseNotCached`,
    naming the set-up step, and records no failure. Any other failed build leaves a record
    (``<venv>.failed``); later calls raise :class:`EraBuildFailed` at once, naming the
    command that tries again (``retry=True``, as the set-up does), instead of failing on
    every run. Scratch folders of dead processes are removed here.
    """
    final = venv_dir(env, cache)
    python = final / "bin" / "python"
    failed = final.with_name(f"{final.name}.failed")
    with _lock_of(final.name):
        if python.exists():
            return python
        _sweep_partial(final)
        if failed.exists() and not retry:
            raise EraBuildFailed(
                f"{env.name} failed to build from {env.source} and was not tried "
                f"again:\n{failed.read_text().strip()[-1500:]}\nFix the cause, then run "
                f"`{SETUP_COMMAND}`, which tries once more."
            )
        base = find_python(env.python)
        scratch = final.with_name(f"{final.name}.partial-{os.getpid()}")
        shutil.rmtree(scratch, ignore_errors=True)
        online = on_demand() if online is None else online
        log(f"casebook: building {env.name} with Python {env.python}")
        if online:
            log(f"casebook: {env.name}: downloading {env.size} ...")
        try:
            _build(env, base, scratch, log if online else None)
            if not python.exists():  # else another process built it first: ours goes
                shutil.rmtree(final, ignore_errors=True)  # a venv whose base Python went
                scratch.rename(final)
            failed.unlink(missing_ok=True)
        except ReleaseNotCached:
            raise
        except (ReleaseError, OSError, subprocess.SubprocessError) as error:
            _replace(failed, f"{type(error).__name__}: {error}")
            raise
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return python


def _sweep_partial(final: Path) -> None:
    """Remove scratch builds (``<venv>.partial-<pid>``) whose process is gone: what an
    interrupted set-up (Ctrl-C, a kill) left behind."""
    for scratch in final.parent.glob(f"{final.name}.partial-*"):
        pid = scratch.name.rpartition("-")[2]
        if pid.isdigit() and int(pid) != os.getpid() and not process_alive(int(pid)):
            shutil.rmtree(scratch, ignore_errors=True)


def writes_bytecode() -> bool:
    """Whether runs write the bytecode of what they import: they start with this process's
    environment, and ``PYTHONDONTWRITEBYTECODE`` is unset there (as in Colab)."""
    return not os.environ.get("PYTHONDONTWRITEBYTECODE")


def install_command(uv_path: str, env: Env, venv: Path, *, online: bool) -> list[str]:
    """The one command that installs an environment, on every path: uv installs its pins
    (written in the venv, :data:`PINS`) into ``venv``, choosing each pin's wheel for its
    Python and platform, every hash checked (``--require-hashes`` where every pin has one).
    ``online``, it may download and trusts the system's certificates (as pip trusts its
    configured ones); otherwise it reads its cache only (``--offline``)."""
    command = [uv_path, "pip", "install", "--python", str(venv / "bin" / "python")]
    command += ["--system-certs" if online else "--offline"]
    command += ["--require-hashes"] if env.hashed else []
    return [*command, "--no-deps", "-r", str(venv / PINS)]


COMPILE = (
    "import compileall, sysconfig; "
    "compileall.compile_dir(sysconfig.get_path('purelib'), quiet=2, workers=0)"
)
"""Compile every module of a venv not compiled yet (a valid ``.pyc`` is left as it is)."""


def _build(env: Env, base: str, venv: Path, say: Callable[[str], None] | None) -> None:
    """Make the venv at ``venv``, install the environment's pins into it (then the pins of
    what they require and lack, ``Env.complete``), apply its patches, and, where runs write
    no bytecode, compile it."""
    uv_path = uv()
    if uv_path is None:
        raise ReleaseError(
            f"building {env.name} needs uv: `pip install uv` (the history and eras extras)"
        )
    subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True)
    _install(uv_path, env, venv, env.requirements, say)
    site = site_packages(venv)
    more = env.complete(site) if env.complete else ""
    if more:
        _install(uv_path, env, venv, env.requirements + more, say)
    for patch in env.patches:
        _replace(site / patch.path, patch.apply((site / patch.path).read_text()))
    if not writes_bytecode():
        if env.python == THIS_PYTHON:
            _borrow_bytecode(site)
        subprocess.run([venv / "bin" / "python", "-c", COMPILE], check=True)


def _install(
    uv_path: str, env: Env, venv: Path, pins: str, say: Callable[[str], None] | None
) -> None:
    """Install ``pins`` into ``venv`` (:func:`install_command`), online where ``say`` is
    given, which receives uv's lines as uv prints them."""
    (venv / PINS).write_text(pins)
    command = install_command(uv_path, env, venv, online=say is not None)
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    for line in proc.stdout or ():
        lines.append(line)
        if say and line.strip():
            say(f"  uv: {line.rstrip()}")
    if proc.wait() != 0:
        _raise_install_error(env, "".join(lines), online=say is not None)


def _raise_install_error(env: Env, output: str, *, online: bool) -> None:
    """A hash mismatch raises :class:`HashMismatch` (never retried); offline, a wheel
    missing from uv's cache :class:`ReleaseNotCached`, naming the set-up step."""
    lower = output.lower()
    if "hash" in lower and ("mismatch" in lower or "do not match" in lower):
        raise HashMismatch(
            f"a wheel of {env.name} does not match the sha256 of {env.source}: "
            f"nothing was installed.\n{output[-2000:]}"
        )
    if not online:
        raise ReleaseNotCached(
            f"{env.name} is not built, and uv's cache lacks wheels of {env.source} "
            f"(nothing is downloaded here). Run `{SETUP_COMMAND}` (both README commands run "
            f"it), which downloads {env.size}.\n{output[-1500:]}"
        )
    raise ReleaseError(f"installing {env.name} failed:\n{output[-3000:]}")


def _replace(path: Path, text: str) -> None:
    """Write ``text`` into a new file and rename it over ``path``: a patched file (uv
    hardlinks the files it installs from its cache, which must never change) and a failure
    record (read whole or not at all by a concurrent page)."""
    scratch = path.with_name(f".{path.name}.{os.getpid()}.new")
    scratch.write_text(text)
    os.replace(scratch, path)


def _borrow_bytecode(site: Path) -> None:
    """Link into ``site`` the bytecode this interpreter's own site-packages holds of each
    module that is the very same file (uv hardlinks both from its cache): a release's
    environment shares today's stack, which set-up compiled once, so only what differs
    (the release, a patched file) is compiled again."""
    own = Path(sysconfig.get_path("purelib"))
    for source in site.rglob("*.py"):
        twin = own / source.relative_to(site)
        try:
            if os.path.samefile(source, twin):
                compiled = Path(importlib.util.cache_from_source(str(source)))
                compiled.parent.mkdir(exist_ok=True)
                os.link(importlib.util.cache_from_source(str(twin)), compiled)
        except OSError:
            continue  # not in today's stack, not compiled there, or on another disk


def casebook_path(cache: Path | None = None) -> Path:
    """A directory holding only a link to the ``casebook`` package: runs in an environment
    put it on ``PYTHONPATH`` to reach the child program, and nothing of today's stack."""
    path = (cache or cache_dir()) / "envs" / "casebook-path"
    link = path / "casebook"
    if not (link.is_symlink() and link.resolve() == PACKAGE):
        path.mkdir(parents=True, exist_ok=True)
        fresh = path / f".casebook-{os.getpid()}"
        fresh.unlink(missing_ok=True)
        fresh.symlink_to(PACKAGE, target_is_directory=True)
        os.replace(fresh, link)  # atomic: concurrent pages never see a missing link
    return path

"""Run code on a historical upstream release, in a subprocess, and check what happened.

Why a subprocess: a notebook kernel has the current stack imported, and Python cannot
hold two versions of ``optax`` in one process. Old optax releases are pure-Python
wheels that run on the current jax, so a run starts the *same interpreter* with the
chosen release unpacked first on ``PYTHONPATH``, executes a piece of code, and sends back
a structured :class:`Outcome`: whether it raised, the exception type and message, the
captured output, an optional ``result`` value, and the versions *actually imported*
(with the file each came from, so a shadowed overlay cannot go unnoticed).

The releases are listed once, with the sha256 of their wheels, in ``manifest.toml``.
:func:`fetch` (``python3 -m casebook fetch``) downloads exactly those wheels, verifies
them and unpacks them into the cache; nothing is downloaded at run time.

Subprocesses run jax on CPU unless asked otherwise, so a notebook on a GPU never has two
processes competing for the accelerator's memory.

In a notebook, ``%load_ext casebook.releases`` adds the ``%%on_release`` cell magic::

    %%on_release optax==0.1.9 --raises TypeError --match found_nan
    opt = optax.MultiSteps(...)
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import difflib
import hashlib
import html
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import tomllib
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Union

REPO_ROOT = Path(__file__).resolve().parent.parent
MANIFEST = Path(__file__).with_name("manifest.toml")
SETUP_COMMAND = "python3 -m casebook fetch"
CURRENT = "current"
"""Target name for the pinned current stack (no overlay: the environment as installed)."""

# Packages whose imported version an Outcome reports when the code imported them.
REPORTED_PACKAGES = ("jax", "jaxlib", "optax", "equinox", "diffrax", "chex", "numpy")


# --------------------------------------------------------------------------- errors


class ReleaseError(Exception):
    """Base class of every error this module raises about releases and runs."""


class UnknownRelease(ReleaseError):
    """The requested release is not in the manifest."""


class ReleaseNotCached(ReleaseError):
    """The release is in the manifest but the set-up step has not fetched it."""


class HashMismatch(ReleaseError):
    """A wheel (or the cache's record of it) does not have the manifest's sha256."""


class PatchError(ReleaseError):
    """A one-line patch did not find exactly one occurrence of the line it replaces."""


class RunTimeout(ReleaseError):
    """The code ran past its time limit; the subprocess was killed."""


class RunCrashed(ReleaseError):
    """The subprocess died without reporting an outcome (e.g. a segfault)."""


class OverlayShadowed(ReleaseError):
    """The code imported a package from somewhere other than the requested release."""


class ExpectationError(AssertionError):
    """An outcome differs from what the book says about it."""


# ------------------------------------------------------------------------- manifest


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


def running_from_checkout() -> bool:
    """Whether ``casebook`` is imported from a clone of the book (editable install or
    ``python3 -m casebook`` in the clone), rather than installed as a package."""
    return (REPO_ROOT / "pyproject.toml").is_file() and (REPO_ROOT / "notebooks").is_dir()


def user_cache_dir() -> Path:
    """The per-user cache directory of this platform, ``casebook`` inside it."""
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA", Path.home() / "AppData" / "Local"))
        return base / "casebook" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "casebook"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "casebook"


def cache_dir() -> Path:
    """Where fetched wheels live: ``$CASEBOOK_CACHE`` if set; ``.casebook-cache/`` in the
    clone when run from one; otherwise the per-user cache (:func:`user_cache_dir`), so an
    installed ``casebook`` never writes into site-packages."""
    if os.environ.get("CASEBOOK_CACHE"):
        return Path(os.environ["CASEBOOK_CACHE"])
    return REPO_ROOT / ".casebook-cache" if running_from_checkout() else user_cache_dir()


def load_manifest(path: Path | None = None) -> dict[str, Release]:
    """Read the manifest into ``{"optax==0.1.9": Release, ...}``."""
    path = Path(path or os.environ.get("CASEBOOK_MANIFEST", MANIFEST))
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


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# ---------------------------------------------------------------------------- fetch


def _unpacked_dir(rel: Release, cache: Path) -> Path:
    return cache / "releases" / f"{rel.package}-{rel.version}"


def _marker(rel: Release, cache: Path) -> Path:
    return _unpacked_dir(rel, cache) / ".casebook-sha256"


def _pip_download(rel: Release, dest: Path, pip_args: Sequence[str]) -> None:
    """Download exactly this wheel with pip, which also enforces the manifest's hash."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as req:
        req.write(f"{rel.spec} --hash=sha256:{rel.sha256}\n")
    try:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
               "--require-hashes", "--disable-pip-version-check", "-q", "-d", str(dest),
               "-r", req.name, *pip_args]
        proc = subprocess.run(cmd, capture_output=True, text=True)
    finally:
        os.unlink(req.name)
    if proc.returncode != 0:
        if "DO NOT MATCH THE HASHES" in proc.stderr:
            raise HashMismatch(f"pip refused {rel.wheel}: its hash differs from the manifest's "
                               f"{rel.sha256}:\n{proc.stderr}")
        raise ReleaseError(f"pip could not download {rel.spec} ({' '.join(cmd)}):\n{proc.stderr}")


def fetch(specs: Iterable[str] | None = None, *, cache: Path | None = None,
          manifest: Mapping[str, Release] | None = None,
          pip_args: Sequence[str] = (), log=print) -> list[Path]:
    """Download, verify and unpack the manifest's wheels (all, or ``specs``). Idempotent.

    A release already unpacked with the manifest's hash is skipped; a wheel already in
    the cache is re-verified rather than downloaded again. Returns the unpacked dirs.
    """
    manifest = load_manifest() if manifest is None else manifest
    cache = Path(cache or cache_dir())
    rels = [resolve(s, manifest) for s in specs] if specs is not None else list(manifest.values())
    wheels = cache / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)

    missing = [r for r in rels if not (wheels / r.wheel).exists()
               and not _is_unpacked(r, cache)]
    if missing:
        log(f"casebook: downloading {len(missing)} wheel(s): {', '.join(r.spec for r in missing)}")
        for rel in missing:  # one call each: pip resolves one version per package per call
            _pip_download(rel, wheels, pip_args)

    out = []
    for rel in rels:
        if not _is_unpacked(rel, cache):
            wheel = wheels / rel.wheel
            if not wheel.exists():
                raise ReleaseNotCached(f"{rel.spec}: expected {wheel} after download; it is missing")
            got = sha256_of(wheel)
            if got != rel.sha256:
                raise HashMismatch(
                    f"{wheel.name}: sha256 {got} but the manifest says {rel.sha256}. "
                    f"Delete the file and run `{SETUP_COMMAND}` again.")
            target = _unpacked_dir(rel, cache)
            shutil.rmtree(target, ignore_errors=True)
            with zipfile.ZipFile(wheel) as zf:
                zf.extractall(target)
            _marker(rel, cache).write_text(rel.sha256)
        out.append(_unpacked_dir(rel, cache))
    log(f"casebook: {len(out)} release(s) ready in {cache}")
    return out


def _is_unpacked(rel: Release, cache: Path) -> bool:
    marker = _marker(rel, cache)
    return marker.exists() and marker.read_text().strip() == rel.sha256


def locate(spec: str, *, cache: Path | None = None,
           manifest: Mapping[str, Release] | None = None) -> Path:
    """The unpacked directory of a fetched release, ready to go first on ``PYTHONPATH``."""
    rel = resolve(spec, manifest)
    cache = Path(cache or cache_dir())
    marker = _marker(rel, cache)
    if not marker.exists():
        raise ReleaseNotCached(
            f"{rel.spec} is in the manifest but not in the cache ({cache}). "
            f"Run the set-up step: `{SETUP_COMMAND}` (both README commands run it).")
    recorded = marker.read_text().strip()
    if recorded != rel.sha256:
        raise HashMismatch(
            f"the cache holds {rel.spec} with sha256 {recorded}, but the manifest says "
            f"{rel.sha256}. Run `{SETUP_COMMAND}` to replace it.")
    return _unpacked_dir(rel, cache)


# -------------------------------------------------------------------------- patches


@dataclasses.dataclass(frozen=True)
class Patch:
    """Replace one line of one file. ``old`` must match exactly one line (stripped)."""

    path: str
    old: str
    new: str

    def apply(self, text: str) -> str:
        lines = text.splitlines(keepends=True)
        hits = [i for i, line in enumerate(lines) if line.strip() == self.old.strip()]
        if len(hits) != 1:
            raise PatchError(
                f"{self.path}: expected exactly one line equal to {self.old.strip()!r}, "
                f"found {len(hits)}")
        i = hits[0]
        indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
        ending = "\n" if lines[i].endswith("\n") else ""
        lines[i] = indent + self.new.strip() + ending
        return "".join(lines)


@dataclasses.dataclass(frozen=True)
class PatchedRelease:
    """A fetched release with one-line patches applied to a private copy of it."""

    base: str
    patches: tuple[Patch, ...]
    name: str

    @property
    def package(self) -> str:
        return parse_spec(self.base)[0]

    @property
    def label(self) -> str:
        return f"{self.base} + {self.name}"

    def __str__(self) -> str:
        return self.label

    def diff(self) -> str:
        """The patches as a unified diff against the base release (for display)."""
        root = locate(self.base)
        chunks = []
        for p in self.patches:
            before = (root / p.path).read_text().splitlines(keepends=True)
            after = p.apply("".join(before)).splitlines(keepends=True)
            chunks.extend(difflib.unified_diff(before, after, f"a/{p.path}", f"b/{p.path}", n=1))
        return "".join(chunks)

    def materialize(self, *, cache: Path | None = None) -> Path:
        """Copy the base release and apply the patches; cached by content hash."""
        cache = Path(cache or cache_dir())
        src = locate(self.base, cache=cache)
        key = hashlib.sha256(repr((self.base, self.patches)).encode()).hexdigest()[:12]
        dst = cache / "patched" / f"{parse_spec(self.base)[0]}-{parse_spec(self.base)[1]}-{key}"
        if not (dst / ".casebook-done").exists():
            # Build in a private directory, then rename: concurrent runs never see a half copy.
            dst.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=dst.name + ".", dir=dst.parent))
            shutil.copytree(src, tmp, dirs_exist_ok=True)
            for p in self.patches:
                f = tmp / p.path
                f.write_text(p.apply(f.read_text()))
            (tmp / ".casebook-done").write_text(self.label)
            try:
                tmp.rename(dst)
            except OSError:  # another process finished first; its copy is identical
                shutil.rmtree(tmp, ignore_errors=True)
        return dst


def patched(base: str, *patches: Patch, name: str) -> PatchedRelease:
    """A release with one-line fixes applied, e.g. an upstream fix back-ported by hand.

    The patch is checked against the base release at once, so a line that does not
    exist fails here, in the cell that defines the fix.
    """
    rel = PatchedRelease(base=resolve(base).spec, patches=tuple(patches), name=name)
    rel.diff()
    return rel


Target = Union[str, PatchedRelease]


def _label(target: Target) -> str:
    return target.label if isinstance(target, PatchedRelease) else str(target)


def _overlay(target: Target) -> tuple[str | None, Path | None]:
    """(package, directory) that goes first on PYTHONPATH; (None, None) for current."""
    if isinstance(target, PatchedRelease):
        return target.package, target.materialize()
    if target == CURRENT:
        return None, None
    return resolve(target).package, locate(target)


# ----------------------------------------------------------------------------- runs


@dataclasses.dataclass
class Outcome:
    """What happened when code ran on a release."""

    target: str
    package: str | None
    ok: bool
    exc_type: str | None
    exc_types: list[str]
    message: str
    traceback: str
    stdout: str
    stderr: str
    versions: dict[str, dict[str, str]]
    result: Any
    seconds: float
    """Wall time of the whole subprocess, interpreter start-up included."""

    @property
    def summary(self) -> str:
        """``OK`` or ``TypeError: <first line of the message>``."""
        if self.ok:
            return "OK"
        first = self.message.strip().splitlines()[0] if self.message.strip() else ""
        return f"{self.exc_type}: {first}"

    def version(self, package: str) -> str:
        return self.versions.get(package, {}).get("version", "?")

    @property
    def imported(self) -> str:
        """The case-relevant versions actually imported, e.g. ``jax 0.10.2, optax 0.1.9``."""
        return ", ".join(f"{k} {self.versions[k]['version']}"
                         for k in ("jax", "optax", "equinox", "diffrax") if k in self.versions)

    def __str__(self) -> str:
        return f"[{self.target}] {self.summary}"

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(str(self))


_CHILD = r"""
import json, sys, traceback
code_path, out_path, packages = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
code = open(code_path).read()
cell_name = sys.argv[5]
import linecache
linecache.cache[cell_name] = (len(code), None, code.splitlines(True), cell_name)
ns = {"__name__": "__main__"}
ns.update(json.load(open(sys.argv[4])))
rec = {"ok": True, "exc_type": None, "exc_types": [], "message": "", "traceback": ""}
try:
    exec(compile(code, cell_name, "exec"), ns)
except BaseException as e:
    rec.update(ok=False, exc_type=type(e).__name__,
               exc_types=[c.__name__ for c in type(e).__mro__],
               message=str(e),
               traceback="".join(traceback.format_exception(type(e), e, e.__traceback__.tb_next)))
sys.stdout.flush(); sys.stderr.flush()
versions = {}
for name in packages:
    mod = sys.modules.get(name)
    if mod is not None:
        versions[name] = {"version": str(getattr(mod, "__version__", "?")),
                          "file": str(getattr(mod, "__file__", ""))}
rec["versions"] = versions
def default(o):
    tolist = getattr(o, "tolist", None)
    return tolist() if callable(tolist) else repr(o)
rec["result"] = ns.get("result")
try:
    payload = json.dumps(rec, default=default)
except (TypeError, ValueError) as e:
    rec["result"] = repr(rec["result"]); payload = json.dumps(rec)
open(out_path, "w").write(payload)
"""


def run(code: str, target: Target = CURRENT, *, timeout: float = 120.0, cpu: bool = True,
        x64: bool = False, env: Mapping[str, str] | None = None,
        inputs: Mapping[str, Any] | None = None) -> Outcome:
    """Run ``code`` in a fresh interpreter with ``target`` first on ``PYTHONPATH``.

    ``target`` is a manifest spec (``"optax==0.1.9"``), a :class:`PatchedRelease`, or
    :data:`CURRENT` for the installed stack. A variable named ``result`` left by the code
    comes back as ``Outcome.result`` (JSON: arrays become lists); ``inputs`` (JSON values)
    are set as global variables of the code before it runs. An exception in the
    code is *recorded*, not raised; a hang raises :class:`RunTimeout`, a dead process
    :class:`RunCrashed`, and an import of the package from anywhere but the requested
    release :class:`OverlayShadowed`.
    """
    label = _label(target)
    package, overlay = _overlay(target)
    code = textwrap.dedent(code)
    child_env = dict(os.environ)
    paths = ([str(overlay)] if overlay else []) + [str(REPO_ROOT)]
    if child_env.get("PYTHONPATH"):
        paths.append(child_env["PYTHONPATH"])
    child_env["PYTHONPATH"] = os.pathsep.join(paths)
    if cpu:
        child_env["JAX_PLATFORMS"] = "cpu"
    else:
        child_env.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    if x64:
        child_env["JAX_ENABLE_X64"] = "1"
    child_env.update(env or {})

    with tempfile.TemporaryDirectory(prefix="casebook-") as tmp:
        code_path = Path(tmp) / "cell.py"
        out_path = Path(tmp) / "outcome.json"
        in_path = Path(tmp) / "inputs.json"
        code_path.write_text(code)
        in_path.write_text(json.dumps(dict(inputs or {})))
        cmd = [sys.executable, "-c", _CHILD, str(code_path), str(out_path),
               ",".join(dict.fromkeys((*REPORTED_PACKAGES, package or "jax"))), str(in_path),
               f"<cell on {label}>"]
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, env=child_env,
                                  timeout=timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as e:
            out = _text(e.stdout)[-2000:]
            err = _text(e.stderr)[-2000:]
            raise RunTimeout(
                f"[{label}] still running after {timeout:g} s; killed.\n"
                f"--- stdout (tail) ---\n{out}\n--- stderr (tail) ---\n{err}") from None
        seconds = time.perf_counter() - t0
        if not out_path.exists():
            raise RunCrashed(
                f"[{label}] the subprocess exited with code {proc.returncode} and no outcome.\n"
                f"--- stderr (tail) ---\n{proc.stderr[-3000:]}")
        rec = json.loads(out_path.read_text())

    outcome = Outcome(target=label, package=package, stdout=proc.stdout, stderr=proc.stderr,
                      seconds=seconds, **rec)
    if overlay is not None and package in outcome.versions:
        imported_from = outcome.versions[package]["file"]
        if not imported_from.startswith(str(overlay)):
            raise OverlayShadowed(
                f"[{label}] {package} was imported from {imported_from}, not from {overlay}")
    return outcome


def _text(x: bytes | str | None) -> str:
    if x is None:
        return ""
    return x.decode(errors="replace") if isinstance(x, bytes) else x


def load_module_file(path: str | Path, name: str):
    """Import one source file as module ``name`` (for loading, say, an old release's
    ``wrappers.py`` beside the installed one, to time two versions in one process)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path} as a module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def source_file(target: Target, relative: str) -> Path:
    """Path of a file inside a fetched (or patched) release, e.g. ``optax/_src/wrappers.py``."""
    package, root = _overlay(target)
    if root is None:
        raise ReleaseError("source_file() needs a release or a patched release, not 'current'")
    path = root / relative
    if not path.exists():
        raise FileNotFoundError(f"{relative} is not in {_label(target)}")
    return path


# ---------------------------------------------------------------------- expectations


def _exc_name(raises: str | type[BaseException]) -> str:
    return raises if isinstance(raises, str) else raises.__name__


def expect(outcome: Outcome, *, raises: str | type[BaseException] | None = None,
           match: str | None = None, versions: Mapping[str, str] | None = None) -> Outcome:
    """Assert that ``outcome`` is what the book says; return it for chaining.

    With ``raises``, the code must have raised that exception type (or a subclass), and
    ``match`` (a regular expression) must be found in its message. Without ``raises``
    the code must have run cleanly. ``versions`` (``{"optax": "0.1.9"}``) checks the
    versions actually imported. A mismatch raises :class:`ExpectationError` carrying the
    captured traceback and output, so a failing test shows what really happened.
    """
    problems = []
    if raises is None:
        if not outcome.ok:
            problems.append(f"expected the code to run cleanly, but it raised {outcome.summary}")
    else:
        name = _exc_name(raises)
        if outcome.ok:
            problems.append(f"expected {name}, but the code ran without an exception")
        elif name not in outcome.exc_types:
            problems.append(f"expected {name}, but it raised {outcome.exc_type} "
                            f"(a {', '.join(outcome.exc_types[:3])})")
        elif match is not None and not re.search(match, outcome.message):
            problems.append(f"{name} was raised, but its message has no match for {match!r}")
    for package, want in (versions or {}).items():
        got = outcome.version(package)
        if got != want:
            problems.append(f"expected {package} {want} to be imported, got {got}")
    if problems:
        raise ExpectationError(_explain(outcome, problems))
    return outcome


def _explain(outcome: Outcome, problems: list[str]) -> str:
    parts = [f"[{outcome.target}] " + "; ".join(problems)]
    if outcome.traceback:
        parts.append("--- traceback ---\n" + outcome.traceback[-4000:])
    elif outcome.message:
        parts.append("--- message ---\n" + outcome.message[-2000:])
    if outcome.stdout.strip():
        parts.append("--- stdout (tail) ---\n" + outcome.stdout[-2000:])
    if outcome.stderr.strip():
        parts.append("--- stderr (tail) ---\n" + outcome.stderr[-2000:])
    return "\n".join(parts)


# --------------------------------------------------------------------- version table


Expected = Union[None, str, type, tuple]
"""What a table cell should be: ``None`` for OK, an exception type, or ``(type, regex)``."""


@dataclasses.dataclass(repr=False)
class VersionTable:
    """Outcomes of several triggers across several releases, measured live."""

    columns: list[str]
    rows: list[str]
    cells: dict[tuple[str, str], Outcome]

    def outcome(self, row: str, column: str | None = None) -> Outcome:
        return self.cells[(row, column or self.columns[0])]

    def check(self, expected: Mapping[str, Expected | Mapping[str, Expected]]) -> VersionTable:
        """Assert listed cells: ``{row: want}`` or ``{row: {column: want}}``.

        ``want`` is ``None`` (runs cleanly), an exception type (or its name), or a pair
        ``(type, regex)`` whose regex must match the message.
        """
        for row, want in expected.items():
            if row not in self.rows:
                raise KeyError(f"no row {row!r} in the table; rows are {self.rows}")
            per_col = want if isinstance(want, Mapping) else {c: want for c in self.columns}
            for col, exc in per_col.items():
                raises, match = exc if isinstance(exc, tuple) else (exc, None)
                expect(self.cells[(row, col)], raises=raises, match=match)
        return self

    def _cell_text(self, o: Outcome) -> str:
        return "OK" if o.ok else o.exc_type or "?"

    def _imported(self) -> tuple[dict[str, str], str]:
        """Per row, the imported versions that differ between rows; and a caption with
        the versions every row shares (``jax 0.10.2, equinox 0.13.8``)."""
        per_row = {r: [part.strip() for part in self.cells[(r, self.columns[0])].imported.split(",")]
                   for r in self.rows}
        shared = [p for p in next(iter(per_row.values()), []) if all(p in v for v in per_row.values())]
        varying = {r: ", ".join(p for p in v if p not in shared) or "-" for r, v in per_row.items()}
        return varying, ("every row imported " + ", ".join(shared)) if shared else ""

    def __str__(self) -> str:
        varying, caption = self._imported()
        head = ["release", "imported"] + self.columns
        lines = [" | ".join(head), " | ".join("---" for _ in head)]
        for r in self.rows:
            lines.append(" | ".join([r, varying[r]] + [self._cell_text(self.cells[(r, c)])
                                                       for c in self.columns]))
        return "\n".join(lines + ([caption] if caption else []))

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(str(self))

    def _repr_html_(self) -> str:
        varying, caption = self._imported()
        head = "".join(f"<th>{html.escape(h)}</th>" for h in ["release", "imported"] + self.columns)
        body = []
        for r in self.rows:
            tds = [f'<td style="white-space:nowrap"><code>{html.escape(r)}</code></td>',
                   f'<td style="white-space:nowrap">{html.escape(varying[r])}</td>']
            for c in self.columns:
                o = self.cells[(r, c)]
                colour = "#1a7f37" if o.ok else "#cf222e"
                title = html.escape(o.summary, quote=True)
                tds.append(f'<td style="color:{colour};font-weight:600" title="{title}">'
                           f"{html.escape(self._cell_text(o))}</td>")
            body.append("<tr>" + "".join(tds) + "</tr>")
        cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
        return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def version_table(triggers: str | Mapping[str, str], targets: Sequence[Target], *,
                  workers: int = 2, **run_kwargs: Any) -> VersionTable:
    """Run each trigger on each target (in parallel subprocesses) and tabulate.

    ``triggers`` is one code string or ``{column name: code}``. Rows are labelled by the
    target (``"optax==0.1.9"``, ``"current"`` or a patched release's label).
    """
    columns = {"trigger": triggers} if isinstance(triggers, str) else dict(triggers)
    for t in targets:  # locate/materialize once, before the workers start
        _overlay(t)
    jobs = [(_label(t), t, c) for t in targets for c in columns]
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {(row, col): pool.submit(run, columns[col], t, **run_kwargs)
                   for row, t, col in jobs}
        cells = {key: f.result() for key, f in futures.items()}
    return VersionTable(columns=list(columns), rows=[_label(t) for t in targets], cells=cells)


# ------------------------------------------------------------------------ cell magic


def _short_traceback(outcome: Outcome, frames: int = 2) -> str:
    """The last frames of the child's traceback plus the full message, for display."""
    tb = outcome.traceback.rstrip().splitlines()
    try:
        start = max(i for i, line in enumerate(tb) if line.startswith("Traceback"))
    except ValueError:
        return outcome.traceback
    body = tb[start + 1:]
    frame_starts = [i for i, line in enumerate(body) if line.startswith("  File ")]
    msg_start = next((i for i, line in enumerate(body)
                      if line.startswith(f"{outcome.exc_type}") and not line.startswith("  ")),
                     len(body))
    keep = frame_starts[-frames:] if frame_starts else [0]
    shown = body[keep[0]:msg_start] if keep[0] < msg_start else []
    prefix = ["Traceback (most recent call last, last frames only):"]
    if len(frame_starts) > frames:
        prefix.append(f"  ... {len(frame_starts) - frames} earlier frame(s) ...")
    return "\n".join(prefix + shown + body[msg_start:])


def _portable(text: str) -> str:
    """Display form of output that names files: this machine's cache and environment
    directories become ``<cache>`` and ``<site-packages>``, so pages read the same
    wherever the book was built."""
    import sysconfig

    text = text.replace(str(cache_dir()), "<cache>")
    return text.replace(sysconfig.get_paths()["purelib"], "<site-packages>")


def on_release(line: str, cell: str, user_ns: dict[str, Any] | None = None) -> Outcome:
    """Implementation of the ``%%on_release`` cell magic (testable without IPython).

    ``%%on_release TARGET [--raises EXC [--match REGEX]] [--ok] [--x64] [--timeout S]
    [--as NAME]``. TARGET is a spec, ``current``, or the name of a :class:`PatchedRelease`
    variable. The cell runs on TARGET; its output and (shortened) traceback are printed;
    with ``--raises``/``--ok`` the outcome is asserted. The outcome is stored in
    ``user_ns[NAME]`` (default ``_release_outcome``).
    """
    user_ns = {} if user_ns is None else user_ns
    args = shlex.split(line)
    opts: dict[str, Any] = {"raises": None, "match": None, "ok": False, "x64": False,
                            "timeout": 120.0, "as": "_release_outcome"}
    positional = []
    it = iter(args)
    for a in it:
        if a in ("--raises", "--match", "--timeout", "--as"):
            try:
                opts[a[2:]] = next(it)
            except StopIteration:
                raise ValueError(f"%%on_release: {a} needs a value") from None
        elif a in ("--ok", "--x64"):
            opts[a[2:]] = True
        elif a.startswith("--"):
            raise ValueError(f"%%on_release: unknown option {a}")
        else:
            positional.append(a)
    if len(positional) != 1:
        raise ValueError("%%on_release needs exactly one target, e.g. optax==0.1.9")
    if opts["ok"] and opts["raises"]:
        raise ValueError("%%on_release: --ok and --raises exclude each other")
    target: Target = positional[0]
    if isinstance(user_ns.get(positional[0]), PatchedRelease):
        target = user_ns[positional[0]]
    outcome = run(cell, target, timeout=float(opts["timeout"]), x64=opts["x64"])
    user_ns[opts["as"]] = outcome
    print(f"[ran on {outcome.target}: {outcome.imported}; {outcome.seconds:.1f} s]")
    if outcome.stdout:
        print(outcome.stdout, end="" if outcome.stdout.endswith("\n") else "\n")
    if not outcome.ok:
        print(_portable(_short_traceback(outcome)))
    if opts["raises"] or opts["ok"]:
        expect(outcome, raises=opts["raises"], match=opts["match"])
    return outcome


def load_ipython_extension(ipython) -> None:  # pragma: no cover - exercised in notebooks
    """``%load_ext casebook.releases`` registers ``%%on_release``."""

    def magic(line: str, cell: str) -> None:
        on_release(line, cell, ipython.user_ns)

    ipython.register_magic_function(magic, magic_kind="cell", magic_name="on_release")

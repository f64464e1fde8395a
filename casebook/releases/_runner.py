"""Run code on a release in a fresh interpreter, and the :class:`Outcome` it sends back.

Why a subprocess: a notebook kernel has the current stack imported, and Python cannot
hold two versions of ``optax`` in one process. Old optax releases are pure-Python wheels
that run on the current jax, so :func:`run` starts the *same interpreter* with the chosen
release first on ``PYTHONPATH`` and runs the child program (:mod:`casebook.releases._child`)
on the code. Each run is a new process: jax runs on CPU unless asked otherwise (so a
notebook on a GPU never has two processes competing for the accelerator's memory), x64
is chosen per run, a hang is killed at the time limit, a crash cannot take the kernel
down, and the versions reported are those the code *actually imported*, with the file
each came from, so a shadowed overlay cannot go unnoticed.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from casebook.display import PlainText
from casebook.failure import Failure
from casebook.project import LIBRARIES
from casebook.releases import _manifest, _pool, eras
from casebook.releases._child import REPORTED_PACKAGES
from casebook.releases._patches import CURRENT, Target, overlay_of, target_label
from casebook.releases.errors import OverlayShadowed, ReleaseError, RunCrashed, RunTimeout

__all__ = ["CHILD_MODULE", "REPORTED_PACKAGES", "Outcome", "load_module_file", "run", "source_file"]


VOLATILE = ("JAX_ENABLE_X64", "PYTEST_CURRENT_TEST")
"""Variables left out of a warm server's environment (and so of its key): x64 is set per
run, and pytest changes ``PYTEST_CURRENT_TEST`` with every test."""

CHILD_MODULE = "casebook.releases._child"
"""The program each run starts (``python -m casebook.releases._child``)."""


@dataclasses.dataclass(repr=False)
class Outcome(PlainText):
    """What happened when code ran on a release.

    Made by :func:`run` (and, one per variant, by :func:`run_program`); asserted by
    :func:`expect`. It prints as ``[target] OK`` or ``[target] TypeError: ...``.

    Args:
        target: the release's label (``"optax==0.1.9"``, ``"current"``).
        package: the package the release overlays (None for ``current``).
        ok: whether the code ran without an exception.
        exc_type: the exception's class name, or None.
        exc_types: the names of its classes, most derived first.
        message: the exception's message.
        traceback: the child's formatted traceback.
        stdout: what the code printed.
        stderr: what the child wrote to stderr.
        versions: ``{package: {"version": ..., "file": ...}}`` of what it imported.
        result: the code's ``result`` variable (JSON), or None.
        seconds: wall time of the run (from the request to the outcome).
        frames: ``[file, lineno, function, source]`` of each frame of the exception.
        code: the code that ran, to run it again elsewhere.

    Examples:
        >>> outcome = run("import json; json.loads('{')")
        >>> outcome.ok, outcome.exc_type, outcome.failure.is_a(ValueError)
        (False, 'JSONDecodeError', True)
        >>> outcome.summary
        'JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)'
    """

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
    """Wall time of the run: from the request to the outcome (a cold run: the whole
    subprocess, interpreter start-up and imports included)."""
    frames: list[list[Any]] = dataclasses.field(default_factory=list)
    """``[file, lineno, function, source]`` of each frame of the exception, outermost first."""
    code: str = ""
    """The code that ran (dedented), so a page can run the same code on another target:
    ``releases.run(outcome.code, "optax==0.2.4")``."""

    @property
    def failure(self) -> Failure | None:
        """The exception as a :class:`~casebook.failure.Failure`, None if the code ran
        cleanly."""
        if self.ok:
            return None
        return Failure.from_record(self.exc_type or "?", self.exc_types, self.message, self.frames)

    @property
    def summary(self) -> str:
        """``OK`` or ``TypeError: <first line of the message>``."""
        failure = self.failure
        return "OK" if failure is None else failure.first_line

    def version(self, package: str) -> str:
        """The version of ``package`` the code imported, ``?`` if it did not."""
        return self.versions.get(package, {}).get("version", "?")

    @property
    def imported(self) -> str:
        """The case-relevant versions actually imported, e.g. ``jax 0.10.2, optax 0.1.9``."""
        return ", ".join(
            f"{k} {self.versions[k]['version']}" for k in LIBRARIES if k in self.versions
        )

    def __str__(self) -> str:
        return f"[{self.target}] {self.summary}"


@dataclasses.dataclass(frozen=True)
class Place:
    """Where a run happens: the interpreter, the directories first on ``PYTHONPATH``,
    the package whose origin is checked, and the directory it must come from."""

    python: str
    path: tuple[Path, ...]
    package: str | None
    home: Path | None


def place_of(target: Target) -> Place:
    """The :class:`Place` of a target: today's interpreter with the release (or nothing,
    for the current stack) before the package's root; or an era's own venv, with only a
    link to the child program on the path (:func:`casebook.releases.eras.casebook_path`),
    so nothing of today's stack can leak into it."""
    if eras.is_era(target):
        assert isinstance(target, str)
        era = eras.era_of(target)
        python = eras.ensure(era)
        return Place(str(python), (eras.casebook_path(),), "jax", eras.venv_dir(era))
    package, overlay = overlay_of(target)
    path = ((overlay,) if overlay else ()) + (_manifest.REPO_ROOT,)
    return Place(sys.executable, path, package, overlay)


def child_env(
    place: Place, *, cpu: bool, x64: bool, env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment of a child: this one, with the place's directories first on
    ``PYTHONPATH`` (only those, for an era), jax on CPU (or, on an accelerator, without
    preallocating its memory), x64 if asked, and ``env`` on top."""
    out = dict(os.environ)
    paths = [str(p) for p in place.path]
    if out.get("PYTHONPATH") and place.python == sys.executable:
        paths.append(out["PYTHONPATH"])
    out["PYTHONPATH"] = os.pathsep.join(paths)
    if cpu:
        out["JAX_PLATFORMS"] = "cpu"
    else:
        out.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    if x64:
        out["JAX_ENABLE_X64"] = "1"
    out.update(env or {})
    return out


def run(
    code: str,
    target: Target = CURRENT,
    *,
    timeout: float = 120.0,
    cpu: bool = True,
    x64: bool = False,
    env: Mapping[str, str] | None = None,
    inputs: Mapping[str, Any] | None = None,
) -> Outcome:
    """Run ``code`` on ``target`` in a child process and return its :class:`Outcome`.

    ``target`` is a manifest spec (``"optax==0.1.9"``), a :class:`PatchedRelease`,
    :data:`CURRENT` for the installed stack, or an era (``"era:optax-828"``: the whole
    stack of the report's day, in its own venv). A variable named ``result`` left by the
    code comes back as ``Outcome.result`` (JSON: arrays become lists); ``inputs`` (JSON
    values) are set as global variables of the code before it runs. An exception in the
    code is *recorded*, not raised; a hang raises :class:`RunTimeout`, a dead process
    :class:`RunCrashed`, and an import of the package from anywhere but the requested
    release (or era) :class:`OverlayShadowed`. Runs fork from a warm server of their
    environment (``casebook.releases._pool``), except with ``env``, which needs a fresh
    interpreter.

    Args:
        code: the Python source to run (dedented first).
        target: the release: a manifest spec, ``"current"``, a
            :class:`PatchedRelease` or an era (``"era:optax-828"``).
        timeout: seconds before the run is killed.
        cpu: run jax on the CPU (the default), so a page on a GPU never has two
            processes competing for the accelerator's memory.
        x64: run with ``JAX_ENABLE_X64=1``.
        env: more environment variables for the child (a cold run).
        inputs: ``{name: JSON value}``, set as globals of the code before it runs.

    Returns:
        The :class:`Outcome`: whether it raised, what, where, what it printed, the
        versions it imported and its ``result``.

    Raises:
        RunTimeout: the code ran past ``timeout``.
        RunCrashed: the child died without an outcome.
        OverlayShadowed: the release's package was imported from somewhere else.
        ReleaseNotCached: the release has not been fetched (``python3 -m casebook fetch``).
        UnknownEra: the era is not in the registry (no case folder names it).
        EraPythonMissing: no interpreter of the era's Python was found.

    Examples:
        >>> outcome = run("print('hi'); result = {'x': [1, 2]}", inputs={})
        >>> outcome.ok, outcome.result, outcome.stdout
        (True, {'x': [1, 2]}, 'hi\\n')
        >>> run("n = N + 1; result = n", inputs={"N": 41}).result
        42
        >>> print(run("int('x')"))
        [current] ValueError: invalid literal for int() with base 10: 'x'
    """
    label = target_label(target)
    place = place_of(target)
    code = textwrap.dedent(code)
    packages = ",".join(dict.fromkeys((*REPORTED_PACKAGES, place.package or "jax")))
    warm = _pool.enabled() and not env

    with tempfile.TemporaryDirectory(prefix="casebook-") as tmp:
        directory = Path(tmp)
        code_path, out_path, in_path = (
            directory / "cell.py",
            directory / "outcome.json",
            directory / "inputs.json",
        )
        code_path.write_text(code)
        in_path.write_text(json.dumps(dict(inputs or {})))
        argv = [str(code_path), str(out_path), packages, str(in_path), f"<cell on {label}>"]
        if warm:
            environment = child_env(place, cpu=cpu, x64=False)
            for per_run in VOLATILE:  # chosen per run in the fork, or not the server's
                environment.pop(per_run, None)
            server = _pool.server_for(place.python, environment, preloads(place.package))
            finished = _pool.warm_run(
                server,
                argv,
                packages=packages,
                x64=x64,
                directory=directory,
                timeout=timeout,
                label=label,
            )
            seconds = finished.seconds
            stdout, stderr = (directory / "stdout").read_text(), (directory / "stderr").read_text()
        else:
            environment = child_env(place, cpu=cpu, x64=x64, env=env)
            seconds, stdout, stderr = _cold_run(place.python, argv, environment, timeout, label)
        if not out_path.exists():
            raise RunCrashed(
                f"[{label}] the run ended without an outcome.\n"
                f"--- stderr (tail) ---\n{stderr[-3000:]}"
            )
        rec = json.loads(out_path.read_text())

    package = None if eras.is_era(target) else place.package
    outcome = Outcome(
        target=label,
        package=package,
        stdout=stdout,
        stderr=stderr,
        seconds=seconds,
        code=code,
        **rec,
    )
    if warm:
        _pool.learn(server, outcome.versions)
    checked = place.package or ""
    if place.home is not None and checked in outcome.versions:
        imported_from = outcome.versions[checked]["file"]
        if not imported_from.startswith(str(place.home)):
            raise OverlayShadowed(
                f"[{label}] {checked} was imported from {imported_from}, not from {place.home}"
            )
    return outcome


def preloads(package: str | None) -> tuple[str, ...]:
    """What a warm server imports before it forks: jax, then the release's package (for
    the current stack and eras: optax, which most runs import)."""
    return tuple(dict.fromkeys(("jax", package if package not in (None, "jax") else "optax")))


_COLD_MAIN = f"import sys; from {CHILD_MODULE} import main; sys.exit(main(sys.argv[1:]))"
"""A cold run's program: the child's ``main`` (``-m`` would warn that the package, which
imports the child module, already holds it)."""


def _cold_run(
    python: str, argv: list[str], environment: dict[str, str], timeout: float, label: str
) -> tuple[float, str, str]:
    """Run the child program in a fresh interpreter: (seconds, stdout, stderr)."""
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(
            [python, "-c", _COLD_MAIN, *argv],
            capture_output=True,
            text=True,
            env=environment,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as e:
        raise RunTimeout(
            f"[{label}] still running after {timeout:g} s; killed.\n"
            f"--- stdout (tail) ---\n{_text(e.stdout)[-2000:]}\n"
            f"--- stderr (tail) ---\n{_text(e.stderr)[-2000:]}"
        ) from None
    if proc.returncode and not Path(argv[1]).exists():
        raise RunCrashed(
            f"[{label}] the subprocess exited with code {proc.returncode} and no outcome.\n"
            f"--- stderr (tail) ---\n{proc.stderr[-3000:]}"
        )
    return time.perf_counter() - t0, proc.stdout, proc.stderr


def _text(x: bytes | str | None) -> str:
    if x is None:
        return ""
    return x.decode(errors="replace") if isinstance(x, bytes) else x


def load_module_file(path: str | Path, name: str) -> ModuleType:
    """Import one source file as module ``name`` (for loading, say, an old release's
    ``wrappers.py`` beside the installed one, to time two versions in one process)."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path} as a module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def source_file(target: Target, relative: str) -> Path:
    """Path of a file inside a fetched (or patched) release, e.g. ``optax/_src/wrappers.py``."""
    _, root = overlay_of(target)
    if root is None:
        raise ReleaseError("source_file() needs a release or a patched release, not 'current'")
    path = root / relative
    if not path.exists():
        raise FileNotFoundError(f"{relative} is not in {target_label(target)}")
    return path

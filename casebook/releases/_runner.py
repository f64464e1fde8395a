"""Run code on a target in a fresh interpreter, and check where its packages came from.

Why a subprocess: a notebook kernel has the current stack imported, and Python cannot
hold two versions of ``optax`` in one process. So :func:`run` runs the child program
(:mod:`casebook.releases._child`) on the code with the target's own interpreter: today's
for the current stack, or that of the target's environment (a release, a patched release
or an era, built by :mod:`casebook.releases._envs`), with nothing on ``PYTHONPATH`` but the
link to the child program. Each run is a new process: jax runs on CPU unless asked
otherwise (so a notebook on a GPU never has two processes competing for the accelerator's
memory), x64 is chosen per run, a hang is killed at the time limit, a crash cannot take the
kernel down, and the versions reported are those the code *actually imported*, with the
file each came from, checked against where they must come from (:func:`check_origins`), so
a shadowed release, era or current stack cannot go unnoticed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import tempfile
import textwrap
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from casebook.project import REPORTED
from casebook.releases import _pool, _targets
from casebook.releases._envs import Place
from casebook.releases._outcome import Outcome
from casebook.releases._targets import CURRENT, Target
from casebook.releases.errors import OverlayShadowed, RunCrashed

READER_CACHE_ENV = "JAX_COMPILATION_CACHE_DIR"
"""jax's persistent compilation cache, as a reader may set it for today's stack. An era's
run does not get it: jax 0.5.1 (era:optax-1210) then imports ``etils.epath`` at its first
compile, and the era's ``etils`` needs ``importlib_resources``, which it lacks, so every run
raised ``ModuleNotFoundError`` instead of the report's error."""


def child_env(place: Place, *, cpu: bool, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a child: this one (for an era, less :data:`READER_CACHE_ENV`),
    with the place's directories first on ``PYTHONPATH`` (only those, but for ``current``), jax on
    CPU (or, on an accelerator, without preallocating its memory), and ``env`` on top. x64
    is chosen per run by the pool."""
    out = dict(os.environ)
    if not place.todays_jax:  # an era's jax reads today's cache settings and may fail
        out.pop(READER_CACHE_ENV, None)
    paths = [str(p) for p in place.path]
    if out.get("PYTHONPATH") and place.cache is None:  # the current stack's run
        paths.append(out["PYTHONPATH"])
    out["PYTHONPATH"] = os.pathsep.join(paths)
    if cpu:
        out["JAX_PLATFORMS"] = "cpu"
    else:
        out.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    out.update(env or {})
    return out


def check_origins(place: Place, versions: Mapping[str, Mapping[str, str]]) -> None:
    """Every reported package the run imported came from where its place says (the
    target's environment, or this interpreter's own site directories);
    :class:`OverlayShadowed` names the first that did not."""
    for name, seen in versions.items():
        home = place.homes.get(name)
        found = Path(seen.get("file") or "")
        if home is None or not seen.get("file"):
            continue
        if not found.resolve().is_relative_to(home.resolve()):
            raise OverlayShadowed(
                f"[{place.label}] {name} was imported from {found}, not from {home}: "
                "something on the path (a PYTHONPATH entry, a .pth file, a sitecustomize) "
                "shadows the release the run asked for"
            )


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
    stack of the report's day). Each but the current stack runs in an environment of its
    own, built by uv on first use (``casebook.releases._envs``). A variable named ``result`` left by the
    code comes back as ``Outcome.result`` (JSON: arrays become lists); ``inputs`` (JSON
    values) are set as global variables of the code before it runs. An exception in the
    code is *recorded*, not raised; a hang raises :class:`RunTimeout`, a dead process
    :class:`RunCrashed`, and an import of jax, optax, equinox, diffrax (or the others
    it reports) from anywhere but the requested release, era or current stack
    :class:`OverlayShadowed`. Runs fork from a warm server of their environment
    (``casebook.releases._pool``), except with ``env``, which needs a fresh interpreter.
    A warm run on today's jax shares one persistent compilation cache
    (``_pool.shared_compile_cache``), so what an earlier run compiled is read, not compiled.

    One run passes through each module once: the target is resolved
    (``_targets.place_of``: the target's environment), the pool runs the child, and
    the outcome is checked here.

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
        OverlayShadowed: a reported package was imported from somewhere else.
        ReleaseNotCached: the target's environment is not built, and uv's cache lacks its
            wheels (``python3 -m casebook setup``).
        UnknownRelease: the release is not in the manifest (:class:`UnknownEra`: the
            era is in no case folder).
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
    place = _targets.place_of(target)
    code = textwrap.dedent(code)
    packages = ",".join(dict.fromkeys((*REPORTED, place.package or "jax")))
    # Named as casebook.storage.owned_tempdir names its folders (not called: a run enters
    # storage once, through the pool), so that a killed run's folder is found and removed.
    with tempfile.TemporaryDirectory(prefix=f"casebook-run-{os.getpid()}-") as tmp:
        directory = Path(tmp)
        code_path, out_path, in_path = (
            directory / "cell.py",
            directory / "outcome.json",
            directory / "inputs.json",
        )
        code_path.write_text(code)
        in_path.write_text(json.dumps(dict(inputs or {})))
        argv = [str(code_path), str(out_path), packages, str(in_path), f"<cell on {place.label}>"]
        finished = _pool.run(
            place.python,
            child_env(place, cpu=cpu, env=env),
            preloads(place.package),
            argv,
            packages=packages,
            x64=x64,
            directory=directory,
            timeout=timeout,
            label=place.label,
            cold=bool(env),
            compile_cache=place.todays_jax,
        )
        stdout, stderr = (directory / "stdout").read_text(), (directory / "stderr").read_text()
        if not out_path.exists():
            raise RunCrashed(
                f"[{place.label}] the run ended without an outcome.\n"
                f"--- stderr (tail) ---\n{stderr[-3000:]}"
            )
        rec = json.loads(out_path.read_text())
    outcome = Outcome(
        target=place.label,
        package=place.package,
        stdout=stdout,
        stderr=stderr,
        seconds=finished.seconds,
        code=code,
        cache=str(place.cache or ""),
        **rec,
    )
    check_origins(place, outcome.versions)
    return outcome


SHARED_PRELOADS = ("equinox", "diffrax")
"""What every warm server imports after the release, where its environment has them:
the pages' runs import them on most targets, and a server that had to be restarted to
add one costs more (about 2 s on two cores) than importing both up front (about 0.5 s)."""


def preloads(package: str | None) -> tuple[str, ...]:
    """What a warm server imports before it forks: jax, the release's package (for the
    current stack and eras: optax, which most runs import), then :data:`SHARED_PRELOADS`
    (a server skips any its environment cannot import)."""
    first = package if package not in (None, "jax") else "optax"
    return tuple(dict.fromkeys(("jax", first, *SHARED_PRELOADS)))


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

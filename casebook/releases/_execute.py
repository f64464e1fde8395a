"""One run, carried out (:func:`execute`): the cell and its inputs written into a folder of
its own, the child program run one of two ways, each leaving the child's stdout and stderr
in that folder, then its outcome read and where its packages came from checked
(:func:`check_origins`), the last step of a run.

* :func:`warm_run`: asked of a warm server (:mod:`casebook.releases._server`, started by
  :mod:`casebook.releases._pool`) over its Unix socket. The request is one JSON line (the
  child's argv, environment, x64, where its output goes); the server answers with the
  forked child's pid, then with its end. The run ran too long (:class:`RunTimeout`), its
  process died without an outcome (:class:`RunCrashed`), or the server was gone before the
  run began (:class:`NotStarted`, which the pool answers by asking a successor).
* :func:`cold_run`: in a fresh interpreter, the reference a warm run is tested against.
  ``CASEBOOK_COLD_RUNS=1`` (or a run with its own ``env``) sends every run here: slower
  (an interpreter and its imports per run), but nothing is shared with anything.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from casebook.project import REPORTED
from casebook.releases._envs import Place
from casebook.releases._outcome import Outcome
from casebook.releases.errors import OverlayShadowed, RunCrashed, RunTimeout

CHILD_MODULE = "casebook.releases._child"
"""The program each run starts (``python -m casebook.releases._child``)."""


@dataclass
class Finished:
    """A run that ended: its pid (0 for a cold run) and the wall seconds it took."""

    pid: int
    seconds: float


_COLD_MAIN = f"import sys; from {CHILD_MODULE} import main; sys.exit(main(sys.argv[1:]))"
"""A cold run's program: the child's ``main`` (``-m`` would warn that the package, which
imports the child module, already holds it)."""


def cold_run(
    python: str,
    argv: list[str],
    environment: Mapping[str, str],
    *,
    timeout: float,
    label: str,
    directory: Path,
) -> Finished:
    """Run the child program in a fresh interpreter; its stdout and stderr land in
    ``directory``, as a warm run's do."""
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
    (directory / "stdout").write_text(proc.stdout)
    (directory / "stderr").write_text(proc.stderr)
    return Finished(0, time.perf_counter() - t0)


def _text(x: bytes | str | None) -> str:
    if x is None:
        return ""
    return x.decode(errors="replace") if isinstance(x, bytes) else x


class NotStarted(Exception):
    """The server went away before the run began (it was stopped, or its process ended): the
    run is safe to ask again of its successor."""


def _tail(path: Path, n: int = 2000) -> str:
    return path.read_text(errors="replace")[-n:] if path.exists() else ""


def warm_run(
    socket_path: str,
    argv: list[str],
    *,
    env: Mapping[str, str],
    packages: str,
    x64: bool,
    directory: Path,
    timeout: float,
    label: str,
    compile_cache: Path | None = None,
) -> Finished:
    """Run the child program with ``argv`` in a fork of the server listening on
    ``socket_path``, in the environment
    ``env`` (and jax's persistent compilation cache in ``compile_cache``); stdout and
    stderr go to ``directory``. Raises :class:`RunTimeout` (the child is killed),
    :class:`RunCrashed` (it died before writing its outcome), or :class:`NotStarted` (the
    server was gone before the run began)."""
    request = {
        "argv": argv,
        "packages": packages,
        "x64": x64,
        "compile_cache": str(compile_cache or ""),
        "env": {**env, "JAX_ENABLE_X64": "1" if x64 else "0"},
        "cwd": os.getcwd(),
        "stdout": str(directory / "stdout"),
        "stderr": str(directory / "stderr"),
    }
    t0 = time.perf_counter()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(timeout)
        try:
            conn.connect(socket_path)
            stream = conn.makefile("rw", encoding="utf-8")
            stream.write(json.dumps(request) + "\n")
            stream.flush()
            first = stream.readline()
        except (FileNotFoundError, ConnectionError) as gone:
            raise NotStarted(str(gone)) from None
        if not first:  # closed unanswered: the server ended with us in its backlog
            raise NotStarted("the server closed the connection")
        reply = json.loads(first)
        pid = reply.get("pid", 0)
        try:
            conn.settimeout(max(0.01, timeout - (time.perf_counter() - t0)))
            done = stream.readline() if pid else first
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, 9)
            raise RunTimeout(
                f"[{label}] still running after {timeout:g} s; killed.\n"
                f"--- stdout (tail) ---\n{_tail(directory / 'stdout')}\n"
                f"--- stderr (tail) ---\n{_tail(directory / 'stderr')}"
            ) from None
    if "done" not in json.loads(done or "{}"):
        code = json.loads(done or "{}").get("exit", "?")
        how = (
            f"was killed by signal {-code}"
            if isinstance(code, int) and code < 0
            else f"exited with code {code}"
        )
        raise RunCrashed(
            f"[{label}] the run's process (pid {pid}) {how} and wrote no outcome.\n"
            f"--- stderr (tail) ---\n{_tail(directory / 'stderr', 3000)}"
        )
    return Finished(pid, time.perf_counter() - t0)


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


def execute(
    place: Place,
    code: str,
    environment: Mapping[str, str],
    *,
    timeout: float,
    x64: bool,
    inputs: Mapping[str, Any] | None,
    socket_path: str | None = None,
    compile_cache: Path | None = None,
) -> Outcome:
    """Run ``code`` once in ``place``: by the warm server at ``socket_path``
    (:func:`warm_run`), or without one in a fresh interpreter (:func:`cold_run`); then
    read the child's outcome and check where its packages came from
    (:func:`check_origins`)."""
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
        if socket_path:
            finished = warm_run(
                socket_path,
                argv,
                env=environment,
                packages=packages,
                x64=x64,
                compile_cache=compile_cache,
                timeout=timeout,
                label=place.label,
                directory=directory,
            )
        else:
            x64_env = {"JAX_ENABLE_X64": "1"} if x64 else {}
            environment = {**environment, **x64_env}
            finished = cold_run(
                place.python,
                argv,
                environment,
                timeout=timeout,
                label=place.label,
                directory=directory,
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

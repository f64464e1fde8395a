"""The warm servers of a kernel: one per environment, started on first use, kept warm.

:func:`casebook.releases.run` asks :func:`run` for each run, once: it runs the child
program in a fresh interpreter (``cold``) or, as a rule, asks :func:`warm_run` to do it in a
forked child of the
:mod:`~casebook.releases._server` for the run's environment: the interpreter, the release
first on the path, CPU only or not, and the modules to preload (jax and the release's
package). A server is started the first time its environment is asked for (a second or
two: the imports) and then answers every run of that environment in a few hundredths of a
second. At most :data:`MAX_SERVERS` stay alive; the least recently used is stopped first.
All are stopped when the kernel exits, and each stops by itself if the kernel dies.

``CASEBOOK_COLD_RUNS=1`` turns the pool off: every run then starts a fresh interpreter,
as before the pool existed (slower, and the reference the pool is tested against).
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from casebook import storage
from casebook.releases.errors import RunCrashed, RunTimeout

__all__ = [
    "CHILD_MODULE",
    "LEARNED",
    "MAX_SERVERS",
    "VOLATILE",
    "Finished",
    "Server",
    "enabled",
    "learn",
    "run",
    "server_for",
    "shutdown",
    "sweep",
    "warm_run",
]

CHILD_MODULE = "casebook.releases._child"
"""The program each run starts (``python -m casebook.releases._child``)."""

VOLATILE = ("JAX_ENABLE_X64", "PYTEST_CURRENT_TEST")
"""Variables left out of a warm server's environment (and so of its key): x64 is set per
run, and pytest changes ``PYTEST_CURRENT_TEST`` with every test."""

MAX_SERVERS = 8
"""How many warm servers a kernel keeps (each holds jax and a release: 150-300 MB)."""

START_TIMEOUT = 180.0
"""Seconds a server may take to import its preloads and say ``ready``."""

SERVER_MODULE = "casebook.releases._server"
SOCKET_PREFIX = "cb-"
"""A server's socket directory is ``cb-<kernel pid>-<random>``: the server removes its own
when it ends, and :func:`sweep` removes those of kernels killed with their servers."""


def enabled() -> bool:
    """Whether runs go through warm servers (unless ``CASEBOOK_COLD_RUNS=1``)."""
    return os.environ.get("CASEBOOK_COLD_RUNS", "") not in ("1", "true", "yes")


POOL_LOG_ENV = "CASEBOOK_POOL_LOG"
"""When set, names a file that gets one JSON line per server start (``python``,
``preload``, ``seconds``): how the profile command tells server starts from warm runs."""


def _log_start(server: Server, seconds: float) -> None:
    path = os.environ.get(POOL_LOG_ENV)
    if path:
        entry = {"python": server.python, "preload": list(server.preload), "seconds": seconds}
        with open(path, "a") as f:
            f.write(json.dumps(entry) + "\n")


def _prefix() -> str:
    """A socket directory's prefix: ``cb-<this process's pid>-``, so a sweep can tell
    whose it is."""
    return f"{SOCKET_PREFIX}{os.getpid()}-"


def sweep(tmp: Path | None = None) -> list[Path]:
    """Remove the socket directories of kernels that died without stopping their servers
    (killed at a time limit, say): ``cb-<pid>-*`` whose pid is gone. Returns them."""
    removed = []
    for directory in Path(tmp or tempfile.gettempdir()).glob(f"{SOCKET_PREFIX}*"):
        owner = directory.name.removeprefix(SOCKET_PREFIX).split("-", 1)[0]
        if directory.is_dir() and (not owner.isdigit() or not storage.process_alive(int(owner))):
            shutil.rmtree(directory, ignore_errors=True)
            removed.append(directory)
    return removed


@dataclass
class Server:
    """One running server: its process, its socket, and where its own errors go."""

    python: str
    env: dict[str, str]
    preload: tuple[str, ...]
    directory: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix=_prefix())))
    process: subprocess.Popen[str] | None = None

    @property
    def socket_path(self) -> str:
        return str(self.directory / "s")

    def start(self) -> Server:
        """Start the process and wait for ``ready``; :class:`RunCrashed` if it dies. The
        seconds it took are logged where ``CASEBOOK_POOL_LOG`` says (the profile command)."""
        t0 = time.perf_counter()
        log = open(self.directory / "server.log", "w")  # noqa: SIM115 - owned by the process
        self.process = subprocess.Popen(
            [
                self.python,
                "-m",
                SERVER_MODULE,
                self.socket_path,
                ",".join(self.preload),
                "--remove-directory",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            env=self.env,
            text=True,
        )
        log.close()
        assert self.process.stdout is not None
        line = self.process.stdout.readline()  # "ready", or "" when the process died
        if line.strip() != "ready":
            self.process.wait(timeout=START_TIMEOUT)
            tail = (self.directory / "server.log").read_text()[-3000:]
            self.stop()
            raise RunCrashed(
                f"the warm server ({', '.join(self.preload) or 'no preloads'}) did not start "
                f"(exit code {self.process.returncode}).\n--- stderr (tail) ---\n{tail}"
            )
        _log_start(self, time.perf_counter() - t0)
        return self

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self) -> None:
        """Close the server's stdin (it exits), wait briefly, then kill; remove its files."""
        if self.process is not None and self.process.poll() is None:
            with contextlib.suppress(OSError):
                assert self.process.stdin is not None
                self.process.stdin.close()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.directory, ignore_errors=True)


@dataclass
class Finished:
    """A warm run that ended: its pid and the wall seconds from request to outcome."""

    pid: int
    seconds: float


LEARNED = ("equinox", "diffrax")
"""Packages a server preloads once a run of its environment has imported them (in this
order: diffrax imports equinox)."""

_servers: collections.OrderedDict[tuple[object, ...], Server] = collections.OrderedDict()
_learned: dict[tuple[object, ...], list[str]] = {}
_lock = threading.Lock()


def server_for(python: str, env: Mapping[str, str], preload: tuple[str, ...]) -> Server:
    """The live server of this environment, started if needed (LRU of :data:`MAX_SERVERS`).

    ``preload`` is the least it imports; packages that earlier runs of the environment
    imported (:func:`learn`) are preloaded too, so the server is restarted once when a
    page's runs turn out to import, say, equinox. A live server that preloads more than
    is asked for serves too (what a run reports is what *it* imported).
    """
    base = (python, tuple(sorted(env.items())))
    wanted = preload + tuple(p for p in _learned.get(base, ()) if p not in preload)
    with _lock:
        server = _servers.get(base)
        if server is not None and server.alive() and set(wanted) <= set(server.preload):
            _servers.move_to_end(base)
            return server
        if server is not None:
            del _servers[base]
            server.stop()
        if not _servers:
            sweep()
        server = Server(python, dict(env), wanted).start()
        _servers[base] = server
        while len(_servers) > MAX_SERVERS:
            _, oldest = _servers.popitem(last=False)
            oldest.stop()
        return server


def learn(server: Server, imported: Iterable[str]) -> None:
    """Note the :data:`LEARNED` packages a run of ``server``'s environment imported."""
    base = (server.python, tuple(sorted(server.env.items())))
    new = [p for p in LEARNED if p in imported and p not in server.preload]
    if new:
        with _lock:
            known = _learned.setdefault(base, [])
            known.extend(p for p in new if p not in known)


def shutdown() -> None:
    """Stop every server of this process."""
    with _lock:
        while _servers:
            _, server = _servers.popitem()
            server.stop()


atexit.register(shutdown)


def _tail(path: Path, n: int = 2000) -> str:
    return path.read_text(errors="replace")[-n:] if path.exists() else ""


def warm_run(
    server: Server,
    argv: list[str],
    *,
    packages: str,
    x64: bool,
    directory: Path,
    timeout: float,
    label: str,
) -> Finished:
    """Run the child program with ``argv`` in a fork of ``server``; stdout and stderr go
    to ``directory``. Raises :class:`RunTimeout` (the child is killed) or
    :class:`RunCrashed` (it died before writing its outcome)."""
    request = {
        "argv": argv,
        "packages": packages,
        "x64": x64,
        "env": {"JAX_ENABLE_X64": "1" if x64 else "0"},
        "cwd": os.getcwd(),
        "stdout": str(directory / "stdout"),
        "stderr": str(directory / "stderr"),
    }
    t0 = time.perf_counter()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(timeout)
        conn.connect(server.socket_path)
        stream = conn.makefile("rw", encoding="utf-8")
        stream.write(json.dumps(request) + "\n")
        stream.flush()
        pid = 0
        try:
            pid = json.loads(stream.readline() or "{}").get("pid", 0)
            conn.settimeout(max(0.01, timeout - (time.perf_counter() - t0)))
            done = stream.readline()
        except TimeoutError:
            if pid:
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


def run(
    python: str,
    environment: Mapping[str, str],
    preload: tuple[str, ...],
    argv: list[str],
    *,
    packages: str,
    x64: bool,
    directory: Path,
    timeout: float,
    label: str,
    cold: bool = False,
) -> Finished:
    """Run the child program with ``argv`` once: in a fork of the warm server of this
    environment (started if needed), or in a fresh interpreter when ``cold`` or
    ``CASEBOOK_COLD_RUNS=1``. The child's stdout and stderr land in ``directory``; a warm
    server learns what the run imported (:func:`learn`)."""
    if cold or not enabled():
        env = {**environment, **({"JAX_ENABLE_X64": "1"} if x64 else {})}
        return _cold_run(python, argv, env, timeout, label, directory)
    env = {k: v for k, v in environment.items() if k not in VOLATILE}
    server = server_for(python, env, preload)
    finished = warm_run(
        server, argv, packages=packages, x64=x64, directory=directory, timeout=timeout, label=label
    )
    with contextlib.suppress(OSError, ValueError):
        learn(server, json.loads(Path(argv[1]).read_text()).get("versions", {}))
    return finished


_COLD_MAIN = f"import sys; from {CHILD_MODULE} import main; sys.exit(main(sys.argv[1:]))"
"""A cold run's program: the child's ``main`` (``-m`` would warn that the package, which
imports the child module, already holds it)."""


def _cold_run(
    python: str,
    argv: list[str],
    environment: Mapping[str, str],
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

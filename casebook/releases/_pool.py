"""The warm servers of one process: one per environment, started on first use, ended with it.

:func:`casebook.releases.run` asks :func:`run` for each run, once: it runs the child
program in a fresh interpreter (``cold``) or, as a rule, in a forked child of this process's
:mod:`~casebook.releases._server` for the run's environment: the interpreter, the release
first on the path, CPU only or not, and the modules to preload (jax and the release's
package). A server starts the first time its process (a kernel, a test worker) asks for its
environment (a second or two: the imports), then answers that process's runs in a few
hundredths of a second. Two runs share a server when they agree on everything it fixes at
start-up (:func:`key_of`): the interpreter, what is installed in it, the environment less
the variables that differ between a run's processes, and casebook's own source. It is the
process's child, in a session of its own (a kernel's
interrupt is not its), and it ends with the process: at its exit (:func:`shutdown`), or
within a second of its being killed (the server watches its parent). Its socket and its log
are in the process's own temporary folder (``casebook-servers-PID-…``), which the test
command removes when a killed process left it (:func:`casebook.storage.leftovers`).

Per process, not one pool per machine shared by every kernel and worker (locks, records,
eviction, an idle clock and a command to list and stop its servers: 690 lines). Issue 50
set the line: keep the simpler design unless the other wins by more than 10 % on the test
command. Measured on one 2-core machine, one fresh test command each, the shared pool was
faster by 8.9 %, 14.4 % and 7.1 % in three pairs (the last, 2026-11-29: 722 s against
773 s, calibration 0.86 and 0.87 s); the median, 8.9 %, is under the line. Page 3 alone
ran in 82 s with it and 76 s without.

``CASEBOOK_COLD_RUNS=1`` turns the servers off: every run then starts a fresh interpreter
(slower, and the reference the servers are tested against).
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import functools
import hashlib
import json
import os
import re
import select
import site
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from casebook import storage
from casebook.project import PACKAGE
from casebook.releases._envs import Place
from casebook.releases._execute import NotStarted, execute
from casebook.releases._outcome import Outcome
from casebook.releases.errors import RunCrashed

MAX_SERVERS = 16
"""How many servers one process keeps (each holds jax and a release: 150-300 MB); a new
one past it stops the least recently used."""

START_TIMEOUT = 180.0
"""Seconds a server may take to import its preloads and say ``ready``."""

SERVER_MODULE = "casebook.releases._server"
SOCKET_ROOM = 88
"""A Unix socket's path must fit in 108 bytes: a temporary folder deeper than this moves
the process's folder to /tmp."""

COMPILE_CACHE = "casebook-compile-cache"
"""The folder, in the temporary folder, of jax's persistent compilation cache that the warm
runs on today's jax share when the process names none (:func:`shared_compile_cache`)."""

POOL_LOG_ENV = "CASEBOOK_POOL_LOG"
"""When set, names a file that gets one JSON line per server start (``python``,
``preload``, ``seconds``, ``at``): how ``bench --profile`` tells server starts from warm
runs."""


def enabled() -> bool:
    """Whether runs go through warm servers (unless ``CASEBOOK_COLD_RUNS=1``)."""
    return os.environ.get("CASEBOOK_COLD_RUNS", "") not in ("1", "true", "yes")


READER_CACHE_ENV = "JAX_COMPILATION_CACHE_DIR"
"""jax's persistent compilation cache, as a reader may set it for today's stack. An era's
run does not get it: jax 0.5.1 (era:optax-1210) then imports ``etils.epath`` at its first
compile, and the era's ``etils`` needs ``importlib_resources``, which it lacks, so every run
raised ``ModuleNotFoundError`` instead of the report's error."""


def shared_compile_cache() -> Path:
    """The compilation cache of a warm run on today's jax: the one this process's jax
    reads (:data:`READER_CACHE_ENV`: the test command gives every process of its run
    one), else the user's :data:`COMPILE_CACHE` in the temporary folder. A run starts from
    a fresh process, so without it each run compiles again what the runs before it compiled
    (:func:`casebook.releases._server.use_compile_cache`)."""
    default = Path(tempfile.gettempdir()) / f"{COMPILE_CACHE}-{os.getuid()}"
    return Path(os.environ.get(READER_CACHE_ENV) or default)


# ------------------------------------------------- which runs share a server (its key)

PER_PROCESS = re.compile(
    r"^(JAX_ENABLE_X64|PYTEST_.*|JPY_.*|PYDEVD_.*|MPLBACKEND|CLICOLOR.*|FORCE_COLOR|PAGER"
    r"|GIT_PAGER|TERM|COLUMNS|LINES)$"
)
"""Variables that differ between the processes of one run (a test worker and its kernels:
pytest's and Jupyter's own, colour and paging) without touching what jax or a release
does; x64 is set per run."""

SERVER_IGNORES = re.compile(f"{PER_PROCESS.pattern}|^CASEBOOK_.*$")
"""Variables left out of a server's key: :data:`PER_PROCESS`, and casebook's own, which
the parent reads, never a server at start-up. Each run still sees them all: it gets its
kernel's whole environment."""


@functools.cache
def source_digest() -> str:
    """casebook's own source as a server would load it (names, sizes, mtimes): a server
    started before an edit must not serve the edited code."""
    h = hashlib.sha256()
    for path in sorted(PACKAGE.rglob("*.py")):
        st = path.stat()
        h.update(f"{path.relative_to(PACKAGE)} {st.st_size} {st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def installed_stamp(python: str) -> list[tuple[str, int]]:
    """The modification times of the interpreter's site-packages folders (its venv's, and
    this process's own when it is the same interpreter): installing, upgrading or
    removing a package adds or removes a ``.dist-info`` there, so a server started
    before ``pip install -U optax`` never serves the runs after it."""
    folders = set(Path(python).parent.parent.glob("lib/python3*/site-packages"))
    if python == sys.executable:
        folders.update(Path(p) for p in site.getsitepackages() if Path(p).is_dir())
    return [(str(f), f.stat().st_mtime_ns) for f in sorted(folders)]


def key_of(python: str, env: Mapping[str, str]) -> str:
    """The name of an environment's server (its socket's): a digest of the interpreter, what is
    installed in it (:func:`installed_stamp`), the environment less
    :data:`SERVER_IGNORES`, and casebook's source."""
    fixed = sorted((k, v) for k, v in env.items() if not SERVER_IGNORES.match(k))
    text = json.dumps([python, installed_stamp(python), fixed, source_digest()])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class Server:
    """One live server of this process: what it preloads, its socket and its process."""

    python: str
    preload: tuple[str, ...]
    socket_path: str
    process: subprocess.Popen[str]

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def log(self) -> Path:
        return Path(self.socket_path).with_suffix(".log")

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        """End the server (SIGTERM; SIGKILL if it lingers) and reap it."""
        if self.alive():
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.socket_path)


class _Owned:
    """This process's servers, by key, least recently used first, and their folder. A
    process forked from one that had servers starts with none: those are its parent's."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.servers: collections.OrderedDict[str, Server] = collections.OrderedDict()
        self.lock = threading.Lock()
        self._folder: tempfile.TemporaryDirectory[str] | None = None

    def folder(self) -> Path:
        if self._folder is None:
            self._folder = storage.owned_tempdir("servers")
            if len(self._folder.name) > SOCKET_ROOM:
                self._folder.cleanup()
                self._folder = storage.owned_tempdir("servers", root=Path("/tmp"))
        return Path(self._folder.name)


_OWNED: _Owned | None = None


def _owned() -> _Owned:
    global _OWNED
    if _OWNED is None or _OWNED.pid != os.getpid():
        _OWNED = _Owned()
    return _OWNED


def _log_start(server: Server, seconds: float) -> None:
    path = os.environ.get(POOL_LOG_ENV)
    if path:
        entry = {
            "python": server.python,
            "preload": list(server.preload),
            "seconds": seconds,
            "at": time.time(),  # when it was ready: the cell whose run holds it paid for it
            "key": Path(server.socket_path).stem,
        }
        with open(path, "a") as f:
            f.write(json.dumps(entry) + "\n")


def _start(python: str, env: Mapping[str, str], preload: tuple[str, ...], socket: Path) -> Server:
    """Start a server listening on ``socket`` and wait for its ``ready``;
    :class:`RunCrashed`, with the tail of its stderr, if it exits or hangs first. The
    seconds it took are logged where ``CASEBOOK_POOL_LOG`` says (``bench --profile``)."""
    t0 = time.perf_counter()
    with contextlib.suppress(FileNotFoundError):
        socket.unlink()
    argv = [python, "-m", SERVER_MODULE, str(socket), ",".join(preload)]
    with open(socket.with_suffix(".log"), "w") as log:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log,
            env=dict(env),
            text=True,
            start_new_session=True,
        )
    assert process.stdout is not None
    with process.stdout:
        answered = select.select([process.stdout], [], [], START_TIMEOUT)[0]
        line = process.stdout.readline() if answered else f"no answer in {START_TIMEOUT:g} s"
    server = Server(python, preload, str(socket), process)
    if not line.startswith("ready"):
        server.stop()
        tail = server.log.read_text(errors="replace")[-3000:]
        raise RunCrashed(
            f"the warm server ({', '.join(preload) or 'no preloads'}) did not start "
            f"({line.strip() or 'it exited'}).\n--- stderr (tail) ---\n{tail}"
        )
    _log_start(server, time.perf_counter() - t0)
    return server


def server_for(python: str, env: Mapping[str, str], preload: tuple[str, ...]) -> Server:
    """This process's live server of this environment, started if it has none.

    ``preload`` is the least it imports. A live server that preloads more serves too
    (what a run reports is what *it* imported); one that preloads less is replaced by a
    server that preloads both.
    """
    owned = _owned()
    key = key_of(python, env)
    with owned.lock:
        live = owned.servers.pop(key, None)
        if live is not None and live.alive() and set(preload) <= set(live.preload):
            owned.servers[key] = live  # now the most recently used
            return live
        wanted = preload
        if live is not None:
            wanted += tuple(p for p in live.preload if p not in wanted)
            live.stop()
        while len(owned.servers) >= MAX_SERVERS:
            owned.servers.popitem(last=False)[1].stop()
        owned.servers[key] = _start(python, env, wanted, owned.folder() / f"{key}.s")
        return owned.servers[key]


def live_servers() -> list[Server]:
    """This process's live servers, least recently used first."""
    owned = _owned()
    return [s for s in owned.servers.values() if s.alive()]


@atexit.register
def shutdown() -> list[int]:
    """Stop this process's servers (at its exit, or when a command wants them gone now);
    their pids."""
    owned = _owned()
    with owned.lock:
        stopped = [s.pid for s in owned.servers.values()]
        for server in owned.servers.values():
            server.stop()
        owned.servers.clear()
    return stopped


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


SHARED_PRELOADS = ("equinox", "diffrax")
"""What a warm server imports after the release, where its environment has them and this
process imported them first: a page that uses diffrax runs programs that import it on most
targets, while a page that never does would pay for it at each server start (diffrax is
0.45 s of a 1.5 s start on two cores; a page starts about nine). A run imports what its
server lacks itself; a process that imports one later replaces each server it then asks
for, once (:func:`server_for`)."""


def preloads(package: str | None) -> tuple[str, ...]:
    """What a warm server imports before it forks: jax, the release's package (for the
    current stack and eras: optax, which most runs import), then those of
    :data:`SHARED_PRELOADS` this process imported (a server skips any its environment
    cannot import)."""
    first = package if package not in (None, "jax") else "optax"
    shared = (name for name in SHARED_PRELOADS if name in sys.modules)
    return tuple(dict.fromkeys(("jax", first, *shared)))


ATTEMPTS = 3
"""How often a run asks for a server when the one it found ended before the run began."""


def run(
    place: Place,
    code: str,
    *,
    timeout: float,
    cpu: bool,
    x64: bool,
    env: Mapping[str, str] | None,
    inputs: Mapping[str, Any] | None,
) -> Outcome:
    """Run ``code`` in ``place`` once (:func:`casebook.releases._execute.execute`): in a
    fork of this process's warm server of that environment (started if needed; on today's
    jax sharing :func:`shared_compile_cache`), or in a fresh interpreter when ``env`` is
    given or ``CASEBOOK_COLD_RUNS=1``."""
    environment = child_env(place, cpu=cpu, env=env)
    preload = preloads(place.package)
    warm = not env and enabled()
    cache = shared_compile_cache() if warm and place.todays_jax else None
    gone = ""
    for _ in range(ATTEMPTS):  # a cold run raises no NotStarted: it is tried once
        server = server_for(place.python, environment, preload) if warm else None
        try:
            return execute(
                place,
                code,
                environment,
                timeout=timeout,
                x64=x64,
                inputs=inputs,
                socket_path=server.socket_path if server else None,
                compile_cache=cache,
            )
        except NotStarted as error:
            gone = f"{error}; see {server.log if server else 'the run'}"
    raise RunCrashed(f"[{place.label}] {ATTEMPTS} warm servers ended before the run began ({gone})")

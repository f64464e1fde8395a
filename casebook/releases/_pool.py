"""The warm servers of a machine: one per environment, shared, started on first use.

:func:`casebook.releases.run` asks :func:`run` for each run, once: it runs the child
program in a fresh interpreter (``cold``) or, as a rule, asks :func:`warm_run` to do it in a
forked child of the :mod:`~casebook.releases._server` for the run's environment: the
interpreter, the release first on the path, CPU only or not, and the modules to preload
(jax and the release's package). A server starts the first time any process on the
machine asks for its environment (a second or two: the imports), and then answers every
run of that environment, from every kernel and test worker, in a few hundredths of a
second. Its files live in a folder of the *pool* named by the environment's key::

    <pool>/<key>/lock         flock: one kernel starts or stops the server at a time
    <pool>/<key>/server.json  {"pid", "preload"} of the live server
    <pool>/<key>/s            its Unix socket
    <pool>/<key>/server.log   its stderr
    <pool>/<key>/used         touched by every run: the least recently used goes first
    <pool>/compile-cache/     jax's persistent compilation cache, shared by the warm runs
                              on today's jax (:data:`COMPILE_CACHE`)

The pool is ``$CASEBOOK_POOL`` (the test command sets one per suite run and stops its
servers at the end), else the machine's, in the temporary folder. A server ends after
``$CASEBOOK_POOL_IDLE`` seconds without a run (:data:`IDLE_SECONDS` by default), and at
most :data:`MAX_SERVERS` (or ``$CASEBOOK_POOL_MAX``) live at once on a machine: the least
recently used is stopped first; a key's folder that no server has used for a day is
removed when a server starts. The key covers everything a server fixes at start-up (the
interpreter and what is installed in it, the environment but for what no server reads,
and casebook's own source), so a run never meets a server started for something else;
each run gets its kernel's whole environment, and x64, from the request.

``CASEBOOK_COLD_RUNS=1`` turns the pool off: every run then starts a fresh interpreter,
as before the pool existed (slower, and the reference the pool is tested against).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from casebook import storage
from casebook.releases._cold import Finished, cold_run
from casebook.releases._keys import key_of
from casebook.releases._request import NotStarted, warm_run
from casebook.releases.errors import RunCrashed
from casebook.runenv import POOL_ENV, POOL_IDLE_ENV, POOL_MAX_ENV

IDLE_SECONDS = 300.0
"""How long a server waits for its next run before it ends (``$CASEBOOK_POOL_IDLE``)."""

MAX_SERVERS = 16
"""How many servers a machine keeps (each holds jax and a release: 150-300 MB), unless
``$CASEBOOK_POOL_MAX`` says otherwise (the test command's run keeps more)."""

START_TIMEOUT = 180.0
"""Seconds a server may take to import its preloads and say ``ready``."""

SERVER_MODULE = "casebook.releases._server"
SOCKET_ROOM = 100
"""A Unix socket's path must fit in 108 bytes: a pool deeper than this moves to /tmp."""


def enabled() -> bool:
    """Whether runs go through warm servers (unless ``CASEBOOK_COLD_RUNS=1``)."""
    return os.environ.get("CASEBOOK_COLD_RUNS", "") not in ("1", "true", "yes")


COMPILE_CACHE = "compile-cache"
"""The pool's folder for jax's persistent compilation cache, shared by the warm runs on
today's jax (not an era's, not a cold run): a run starts from a fresh process, so without
it each run compiles again what the runs before it compiled
(:func:`casebook.releases._server.use_compile_cache`)."""


def shared_compile_cache(server: Path) -> Path:
    """The compilation cache of a warm run on today's jax: the one this process's jax
    reads (``JAX_COMPILATION_CACHE_DIR``: the test command gives every process of its run
    one), else the pool's own (:data:`COMPILE_CACHE`)."""
    return Path(os.environ.get("JAX_COMPILATION_CACHE_DIR") or server.parent / COMPILE_CACHE)


POOL_LOG_ENV = "CASEBOOK_POOL_LOG"
"""When set, names a file that gets one JSON line per server start (``python``,
``preload``, ``seconds``, ``at``): how ``bench --profile`` tells server starts from warm
runs."""


def pool_directory() -> Path:
    """The pool: ``$CASEBOOK_POOL``, else the machine's, ``casebook-pool-<uid>`` in the
    temporary folder (whatever release cache a process uses: the cache is part of each
    server's key); a folder under /tmp named after it when its sockets' paths would be
    too long."""
    default = Path(tempfile.gettempdir()) / f"casebook-pool-{os.getuid()}"
    chosen = Path(os.environ.get(POOL_ENV) or default).absolute()
    if len(str(chosen / ("k" * 16) / "s")) > SOCKET_ROOM:
        digest = hashlib.sha256(str(chosen).encode()).hexdigest()[:12]
        chosen = default.with_name(f"{default.name}-{digest}")
    chosen.mkdir(parents=True, exist_ok=True)
    return chosen


def _locked(directory: Path) -> IO[str]:
    """``directory/lock``, opened and locked, waiting for it (closing it unlocks); taken
    again if the folder was removed while this waited (:func:`_remove_unused`)."""
    while True:
        directory.mkdir(parents=True, exist_ok=True)
        f = open(directory / "lock", "a")  # noqa: SIM115 - the caller closes it
        fcntl.flock(f, fcntl.LOCK_EX)
        with contextlib.suppress(FileNotFoundError):
            if os.stat(directory / "lock").st_ino == os.fstat(f.fileno()).st_ino:
                return f
        f.close()


def _locked_if_free(directory: Path) -> IO[str] | None:
    """``directory/lock``, locked, or None if another process holds it."""
    f = open(directory / "lock", "a")  # noqa: SIM115 - the caller closes it
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.close()
        return None
    return f


def _log_start(server: Server, seconds: float) -> None:
    path = os.environ.get(POOL_LOG_ENV)
    if path:
        entry = {
            "python": server.python,
            "preload": list(server.preload),
            "seconds": seconds,
            "at": time.time(),  # when it was ready: the cell whose run holds it paid for it
            "key": server.directory.name,
        }
        with open(path, "a") as f:
            f.write(json.dumps(entry) + "\n")


def _is_server(pid: int) -> bool:
    """Whether ``pid`` is a live casebook server: a server that was killed (by the OOM
    killer, say) leaves its record behind, and its pid may since belong to another
    process, which must neither be signalled nor taken for a server."""
    if not storage.process_alive(pid):
        return False
    if not Path("/proc/self").exists():  # no /proc (macOS): the pid is all there is
        return True
    with contextlib.suppress(OSError):
        return SERVER_MODULE.encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
    return False


@dataclass
class Server:
    """One server of the pool: its folder, and what it preloads once live."""

    python: str
    env: dict[str, str]
    preload: tuple[str, ...]
    directory: Path
    pid: int = 0

    @property
    def socket_path(self) -> str:
        return str(self.directory / "s")

    @classmethod
    def found(cls, directory: Path) -> Server | None:
        """The live server recorded in ``directory``, or None."""
        try:
            info = json.loads((directory / "server.json").read_text())
        except (OSError, ValueError):
            return None
        if not _is_server(info["pid"]) or not (directory / "s").exists():
            return None
        return cls(info["python"], {}, tuple(info["preload"]), directory, info["pid"])

    def start(self) -> Server:
        """Start the server (the caller holds the folder's lock) and wait for ``ready``;
        :class:`RunCrashed` if it dies first. The seconds it took are logged where
        ``CASEBOOK_POOL_LOG`` says (``bench --profile``)."""
        t0 = time.perf_counter()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.socket_path)  # a server that was killed leaves its socket
        idle = os.environ.get(POOL_IDLE_ENV) or str(IDLE_SECONDS)
        argv = [self.python, "-m", SERVER_MODULE, self.socket_path, ",".join(self.preload)]
        with open(self.directory / "server.log", "w") as log:
            launcher = subprocess.Popen(
                [*argv, "--idle", idle],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=log,
                env=self.env,
                text=True,
            )
        assert launcher.stdout is not None
        with launcher.stdout:  # "ready PID" from the detached server, "" if it died
            answered = select.select([launcher.stdout], [], [], START_TIMEOUT)[0]
            line = launcher.stdout.readline() if answered else f"no answer in {START_TIMEOUT:g} s"
            word, _, pid = line.partition(" ")
        try:  # the launcher exits as soon as it forks; one that hangs is killed
            launcher.wait(timeout=START_TIMEOUT if answered else 1.0)
        except subprocess.TimeoutExpired:
            launcher.kill()
            launcher.wait()
        if word != "ready":
            tail = (self.directory / "server.log").read_text(errors="replace")[-3000:]
            raise RunCrashed(
                f"the warm server ({', '.join(self.preload) or 'no preloads'}) did not start "
                f"({line.strip() or 'it exited'})."
                f"\n--- stderr (tail) ---\n{tail}"
            )
        self.pid = int(pid)
        info = {"pid": self.pid, "python": self.python, "preload": list(self.preload)}
        storage.write_text(self.directory / "server.json", json.dumps(info))
        (self.directory / "used").touch()
        _log_start(self, time.perf_counter() - t0)
        return self

    def stop(self) -> None:
        """Stop the server (the caller holds the folder's lock): its socket and record go
        at once, so the next run starts a successor; the process ends on SIGTERM."""
        for name in ("server.json", "s"):
            with contextlib.suppress(FileNotFoundError):
                (self.directory / name).unlink()
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGTERM)


def server_for(python: str, env: Mapping[str, str], preload: tuple[str, ...]) -> Server:
    """The live server of this environment, started if no process on the machine has one.

    ``preload`` is the least it imports. A live server that preloads more serves too
    (what a run reports is what *it* imported); one that preloads less is replaced by a
    server that preloads both.
    """
    key = key_of(python, env)
    wanted = preload
    directory = pool_directory() / key
    with _locked(directory):
        live = Server.found(directory)
        if live is not None and set(wanted) <= set(live.preload):
            return live
        if live is not None:
            wanted += tuple(p for p in live.preload if p not in wanted)
            live.stop()
        _make_room(directory.parent, keep=key)
        return Server(python, dict(env), wanted, directory).start()


def live_servers(pool: Path | None = None) -> list[Server]:
    """The pool's live servers, least recently used first."""
    pool = pool or pool_directory()
    found = [s for d in pool.iterdir() if d.is_dir() and (s := Server.found(d)) is not None]

    def last_used(server: Server) -> float:
        with contextlib.suppress(OSError):
            return (server.directory / "used").stat().st_mtime
        return 0.0

    return sorted(found, key=last_used)


def _make_room(pool: Path, keep: str) -> None:
    """Stop the least recently used servers until a new one fits the limit,
    ``$CASEBOOK_POOL_MAX`` or :data:`MAX_SERVERS` (skipping any whose folder another
    kernel holds: it is starting or stopping it)."""
    limit = int(os.environ.get(POOL_MAX_ENV) or MAX_SERVERS)
    others = [s for s in live_servers(pool) if s.directory.name != keep]
    while len(others) >= limit:
        oldest = others.pop(0)
        held = _locked_if_free(oldest.directory)
        if held is not None:
            with held:
                _stop_if_live(oldest.directory)
    _remove_unused(pool, keep)


UNUSED_SECONDS = 24 * 3600.0
"""A key's folder with no live server and no run for this long is removed."""


def _remove_unused(pool: Path, keep: str) -> None:
    """Remove the folders of keys no server has served for :data:`UNUSED_SECONDS` (a
    release, an era or casebook's source changed since: each change makes a new key), so
    the machine's pool does not grow by a folder per key for ever. One whose lock another
    process holds is left; a process that waited for a removed folder's lock takes it
    again on a new folder (:func:`_locked`)."""
    now = time.time()
    for folder in pool.iterdir():
        if folder.name == keep or len(folder.name) != 16 or not folder.is_dir():
            continue
        try:
            last = max(p.stat().st_mtime for p in (folder, *folder.iterdir()))
        except (OSError, ValueError):
            continue
        if now - last < UNUSED_SECONDS:
            continue
        held = _locked_if_free(folder)
        if held is not None:
            with held:
                if Server.found(folder) is None:
                    shutil.rmtree(folder, ignore_errors=True)


def shutdown(pool: Path | None = None, wait: float = 10.0) -> list[int]:
    """Stop every server of the pool (this machine's, or ``pool``), and wait up to
    ``wait`` seconds for their processes to end (each takes its folder's lock to clean up,
    so it can end only once the lock is released); their pids."""
    stopped = []
    for server in live_servers(pool):
        with _locked(server.directory):
            stopped += _stop_if_live(server.directory)
    deadline = time.monotonic() + wait
    while any(_is_server(pid) for pid in stopped) and time.monotonic() < deadline:
        time.sleep(0.05)
    return stopped


def _stop_if_live(directory: Path) -> list[int]:
    """Stop the server ``directory`` records, read again under its lock (the caller holds
    it): the one seen before taking the lock may have been replaced since. Its pid."""
    live = Server.found(directory)
    if live is None:
        return []
    live.stop()
    return [live.pid]


def main(argv: list[str]) -> int:
    """``python3 -m casebook setup --servers [stop]``: list the pool's live servers (least
    recently used first), or stop them all."""
    if argv[:1] == ["stop"]:
        stopped = shutdown()
        print(f"casebook setup --servers: stopped {len(stopped)} server(s) in {pool_directory()}")
        return 0
    if argv:
        raise SystemExit("usage: python3 -m casebook setup --servers [stop]")
    servers = live_servers()
    for server in servers:
        print(f"  pid {server.pid}: {', '.join(server.preload)} ({server.directory.name})")
    print(f"casebook setup --servers: {len(servers)} live server(s) in {pool_directory()}")
    return 0


ATTEMPTS = 3
"""How often a run asks for a server when the one it found ended before the run began."""


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
    compile_cache: bool = False,
) -> Finished:
    """Run the child program with ``argv`` once: in a fork of the machine's warm server of
    this environment (started if needed; with ``compile_cache``, sharing the pool's), or
    in a fresh interpreter when ``cold`` or ``CASEBOOK_COLD_RUNS=1``. The child's stdout
    and stderr land in ``directory``."""
    if cold or not enabled():
        env = {**environment, **({"JAX_ENABLE_X64": "1"} if x64 else {})}
        return cold_run(python, argv, env, timeout=timeout, label=label, directory=directory)
    gone = ""
    for _ in range(ATTEMPTS):
        server = server_for(python, environment, preload)
        try:
            return warm_run(
                server.socket_path,
                server.directory / "used",
                argv,
                env=environment,
                packages=packages,
                x64=x64,
                directory=directory,
                timeout=timeout,
                label=label,
                compile_cache=shared_compile_cache(server.directory) if compile_cache else None,
            )
        except NotStarted as error:
            gone = f"{error}; see {server.directory / 'server.log'}"
    raise RunCrashed(f"[{label}] {ATTEMPTS} warm servers ended before the run began ({gone})")

"""A warm worker for one environment: imports jax and a release once, forks per run.

Starting an interpreter and importing jax and optax costs a second or more; a page makes
dozens of release runs. So :mod:`casebook.releases._pool` keeps, per environment (an
interpreter, a release first on the path, CPU or not), one server for each process that
asks (a kernel, a test worker), started as its child, in a session of its own::

    python -m casebook.releases._server SOCKET PRELOAD

It imports the modules of ``PRELOAD`` (comma-separated, e.g. ``jax,optax``) and nothing
else: no backend is initialised, no array is made, no user code runs in it. Then it
listens on the Unix socket ``SOCKET`` and prints ``ready PID``. For each connection it
forks; the child, a copy of a process in which nothing has run yet, does one run
(:func:`serve_one`) in the environment the request carries and exits, so every run starts
from the same fresh module state, and a crash or a hang takes down only that child. The
server ends on SIGTERM, or within :data:`TICK` of the process that started it ending.

The protocol is JSON lines: the request; ``{"pid": ...}`` as soon as the run starts (so
the parent can kill it at its timeout); ``{"done": true}`` when the outcome file is
written; and ``{"exit": CODE}`` from a small monitor process (the run's parent) when the
run has ended, so a run that died is reported with its exit code or signal.

Standard library only: the server also runs in era environments on older Pythons.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import selectors
import signal
import socket
import sys
import traceback
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from casebook.project import REPORTED
from casebook.releases import _child

_PRELOADED: dict[str, list[str]] = {}
"""Per preloaded module, the reported packages its import brought in (e.g. optax: jax,
chex, numpy), so a run that imports optax reports them as the cold run did."""


def preload(names: Iterable[str], reported: Iterable[str]) -> dict[str, list[str]]:
    """Import ``names`` in order; per name, the ``reported`` packages its import used:
    those its modules imported (already loaded or not), and what those had brought in.

    A module that fails to import is skipped and its partial import removed, so a run
    that imports it meets the same error as in a fresh process.
    """
    reported = list(reported)
    for name in names:
        loaded = set(sys.modules)
        requested, restore = _track_imports()
        try:
            importlib.import_module(name)
        except Exception as error:  # an old release may not import on this stack
            for module in set(sys.modules) - loaded:
                del sys.modules[module]
            print(
                f"preload of {name} failed ({error!r}); runs import it themselves", file=sys.stderr
            )
            continue
        finally:
            restore()
        used = requested | {name.partition(".")[0]}
        for earlier in list(used):
            used.update(_PRELOADED.get(earlier, ()))
        _PRELOADED[name] = [p for p in reported if p in used and p in sys.modules]
    return _PRELOADED


def _track_imports() -> tuple[set[str], Callable[[], None]]:
    """Until the returned function is called, record the top-level name of every
    ``import`` statement (even of a module already imported)."""
    import builtins

    requested: set[str] = set()
    original = builtins.__import__

    def tracking(
        name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0
    ) -> Any:
        if level == 0 and name:
            requested.add(name.partition(".")[0])
        return original(name, globals, locals, fromlist, level)

    def restore() -> None:
        builtins.__import__ = original

    builtins.__import__ = tracking
    return requested, restore


def _imported(requested: set[str], preloaded_now: set[str], packages: list[str]) -> list[str]:
    """The reported packages the run imported: those new since the fork, plus what each
    preloaded module it imported had brought in at preload time."""
    names = {p for p in packages if p in sys.modules and p not in preloaded_now}
    for name, brought in _PRELOADED.items():
        if name.partition(".")[0] in requested:
            names.update(brought)
    names.update(p for p in requested if p in packages and p in sys.modules)
    return [p for p in packages if p in names]


def serve_one(conn: socket.socket) -> None:
    """In a forked child: read one request, run it, report, return (the caller exits)."""
    stream = conn.makefile("rw", encoding="utf-8")
    request = json.loads(stream.readline())
    stream.write(json.dumps({"pid": os.getpid()}) + "\n")
    stream.flush()
    os.chdir(request["cwd"])
    os.environ.clear()  # the asking kernel's environment, not the first starter's
    os.environ.update(request["env"])
    for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
        sys.stdout.flush()
        sys.stderr.flush()
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(target, fd)
        os.close(target)
    if "jax" in sys.modules:  # the environment variable is read only at import
        sys.modules["jax"].config.update("jax_enable_x64", bool(request["x64"]))
        if request.get("compile_cache"):
            use_compile_cache(sys.modules["jax"].config, request["compile_cache"])
    packages = request["packages"].split(",")
    preloaded_now = {p for p in packages if p in sys.modules}
    requested, _ = _track_imports()
    _child.main(request["argv"], imported=lambda: _imported(requested, preloaded_now, packages))
    sys.stdout.flush()
    sys.stderr.flush()
    stream.write(json.dumps({"done": True}) + "\n")
    stream.flush()


CACHE_MISREAD = "Error (reading|writing) persistent compilation cache entry"
"""jax's warning when a cache entry cannot be read (another run is still writing it: jax
writes entries in place) or written; jax then compiles, as without a cache."""


def use_compile_cache(config: Any, directory: str) -> None:
    """Before the run's first compile: jax's persistent compilation cache in
    ``directory``, for every compile, however short (jax's default skips those under a
    second: nearly all of a run's), with a misread entry compiled again in silence.

    An eager LBFGS update of an Equinox MLP took 3.4 s in a fresh process, 0.85 s with the
    cache warm. The cache's key covers the program, jax's and jaxlib's versions, the
    backend and the compile options, so a hit is the executable XLA would build again.
    jax reports a hit as a compile all the same (its ``backend_compile_duration`` event
    times the read), so counts of compiles do not change; a program that *times* cold
    compiles turns the cache off at its top, before anything compiles
    (``bench.compile_seconds`` turns it off for itself)."""
    config.update("jax_compilation_cache_dir", directory)
    config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    warnings.filterwarnings("ignore", message=CACHE_MISREAD)


def main(argv: list[str]) -> int:
    """``main([SOCKET, PRELOAD])``: preload, announce ``ready PID``, fork per connection;
    end on SIGTERM, or once the process that started it is gone."""
    path, names = argv[:2]
    owner = os.getppid()
    signal.signal(signal.SIGTERM, _stop)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        preload([n for n in names.split(",") if n], REPORTED)
        warnings.filterwarnings("ignore", message=".*use of fork\\(\\) may lead to deadlocks")
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped automatically
        listener.bind(path)
        listener.listen(64)
        print(f"ready {os.getpid()}", flush=True)
        _close_stdout()
        return _serve(listener, owner)
    except SystemExit:
        return 0
    finally:
        listener.close()
        with contextlib.suppress(OSError):
            os.unlink(path)


def _stop(signum: int, frame: Any) -> None:
    """SIGTERM: unwind through :func:`main`'s clean-up."""
    raise SystemExit(0)


def _close_stdout() -> None:
    """Point stdout at /dev/null: the process that started us has read ``ready``."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)


TICK = 1.0
"""How often a waiting server checks that the process that started it still runs."""


def _serve(listener: socket.socket, owner: int) -> int:
    """Fork a monitor per connection; return once ``owner``, the process that started the
    server, is gone (a killed kernel leaves no server behind)."""
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    while True:
        if not selector.select(timeout=TICK):
            if os.getppid() != owner:
                return 0
            continue
        conn, _ = listener.accept()
        if os.fork() == 0:
            selector.close()
            listener.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            _monitor(conn)
        conn.close()


def _monitor(conn: socket.socket) -> None:
    """In a fork of the server: fork the run, wait for it, and send its exit code
    (``{"exit": 3}``; a signal is negative), so the parent can say how a run died."""
    pid = os.fork()
    if pid == 0:
        try:
            serve_one(conn)
        except BaseException:  # noqa: BLE001 - reported on the run's stderr
            traceback.print_exc()
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    with contextlib.suppress(OSError):
        conn.sendall((json.dumps({"exit": os.waitstatus_to_exitcode(status)}) + "\n").encode())
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

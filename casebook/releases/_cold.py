"""A run in a fresh interpreter: the reference a warm run is tested against.

``CASEBOOK_COLD_RUNS=1`` (or a run with its own ``env``) sends every run here instead of
to a warm server of :mod:`casebook.releases._pool`: slower (an interpreter and its
imports per run), but nothing is shared with anything. Both kinds of run end in a
:class:`Finished`, with the child's stdout and stderr in the run's folder.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from casebook.releases.errors import RunCrashed, RunTimeout

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

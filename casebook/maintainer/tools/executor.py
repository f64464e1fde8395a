"""How the book's commands execute a notebook: in a kernel, top to bottom, each cell timed.

Every command that runs a page outside the test command's ``pytest --nbmake`` and the
book's build (whose pre-build runs jupyter-cache's own executor) goes through
:func:`execute`: the page profile (``bench --profile``, :mod:`casebook.maintainer.tools.profile`), the
runs a machine stores (:mod:`casebook.maintainer.tools.pageruns`, on a GPU too), and the Colab simulation and the workshop's
timing (:mod:`casebook.maintainer.tools.colabsim`). The last two, and a machine's runs, run this
file as a script in a process of its own (:func:`in_subprocess`), the Colab simulation in
a bare venv that has no ``casebook`` until the page's set-up cell installs it. So this
module imports only the standard library at its top, and nbclient when it runs.

The kernel talks over IPC, its sockets in a temp folder named as
:mod:`casebook.storage` names the folders it can sweep (``casebook-kernel-<pid>-``): no
"running over TCP without encryption" warning per page, and nothing left behind by a
killed run that the next test command cannot find. The kernel's own standard error (what
XLA's C++ logs write below Python) goes to a file in that folder, not to the terminal of
the command that runs the page: :attr:`Executed.log` keeps its tail for a page that
failed. A cell's seconds are nbclient's own record (``record_timing``: the timestamps in
its ``metadata.execution``).
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["CellRun", "Executed", "execute", "in_subprocess", "main", "window_of"]


@dataclass(frozen=True)
class CellRun:
    """One executed code cell: its index in the notebook, its seconds, and the error it
    raised (``"NameError: name 'x' is not defined"``), "" when it raised none."""

    index: int
    seconds: float
    error: str = ""


@dataclass
class Executed:
    """A notebook after :func:`execute`: the executed notebook (outputs in place), the wall
    seconds, and each code cell's run, in order."""

    notebook: Any
    seconds: float
    cells: list[CellRun] = field(default_factory=list)
    log: str = ""

    @property
    def errors(self) -> list[CellRun]:
        return [c for c in self.cells if c.error]

    @property
    def passed(self) -> bool:
        return not self.errors

    def summary(self) -> dict[str, Any]:
        """What a record keeps of the run: seconds, pass or fail, and the failing cells."""
        return {
            "passed": self.passed,
            "seconds": round(self.seconds, 1),
            "failed_cells": [asdict(c) for c in self.errors],
        }


def _error_of(cell: Any) -> str:
    if "raises-exception" in cell.get("metadata", {}).get("tags", []):
        return ""
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            first = (output.get("evalue") or "").strip().splitlines()
            return f"{output.get('ename')}: {first[0][:200] if first else ''}"
    return ""


def window_of(cell: Any) -> tuple[float, float]:
    """When a code cell ran, in epoch seconds, as nbclient recorded it (``metadata.execution``,
    UTC): its code reaching the kernel, and the kernel's reply (its start again for a cell
    that never finished)."""
    record = cell.get("metadata", {}).get("execution", {})
    start = record.get("iopub.execute_input") or record.get("shell.execute_reply.started")
    if not start:
        return 0.0, 0.0
    end = record.get("shell.execute_reply") or start
    low, high = (datetime.datetime.fromisoformat(t).timestamp() for t in (start, end))
    return low, max(low, high)


def execute(path: Path, *, timeout: int = 900, allow_errors: bool = False) -> Executed:
    """Run the notebook at ``path`` in a fresh ``python3`` kernel of this environment, from
    the notebook's folder, and return it executed.

    Without ``allow_errors`` the run stops at the first failing cell, as a test does; the
    returned :class:`Executed` then ends with that cell. With it, every cell runs and each
    failing one is listed (a profile, or a machine's record of which cells fail). Each
    code cell that ran keeps nbclient's timestamps in its ``metadata.execution``."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError
    from traitlets.config import Config

    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:  # a record saved with the page is not this run's
        cell.get("metadata", {}).pop("execution", None)
    unfinished = ""
    t0 = time.perf_counter()
    with (
        tempfile.TemporaryDirectory(prefix=f"casebook-kernel-{os.getpid()}-") as sockets,
        open(Path(sockets) / "kernel.err", "w+") as kernel_err,
    ):
        client = NotebookClient(
            nb,
            timeout=timeout,
            kernel_name="python3",
            allow_errors=allow_errors,
            record_timing=True,
            resources={"metadata": {"path": str(Path(path).parent)}},
            config=Config({"KernelManager": {"transport": "ipc", "ip": f"{sockets}/kernel"}}),
        )
        try:
            client.execute(stderr=kernel_err)  # passed on to the kernel's process
        except CellExecutionError:
            pass  # the failing cell holds its error
        except (CellTimeoutError, DeadKernelError) as error:  # the cell never finished
            unfinished = f"{type(error).__name__}: {str(error)[:200]}"
        runs = [
            CellRun(i, round(window_of(c)[1] - window_of(c)[0], 3), _error_of(c))
            for i, c in enumerate(nb.cells)
            if c.cell_type == "code" and "execution" in c.get("metadata", {})
        ]
        if unfinished and runs:  # the last cell that started is the one
            runs[-1] = CellRun(runs[-1].index, 0.0, unfinished)
        failed = any(r.error for r in runs)
        kernel_err.seek(0)
        log = kernel_err.read()[-4000:] if failed else ""
    return Executed(nb, time.perf_counter() - t0, runs, log)


def in_subprocess(
    notebook: Path,
    out: Path,
    *,
    python: str | Path = sys.executable,
    env: Mapping[str, str] | None = None,
    allow_errors: bool = False,
) -> tuple[dict[str, Any], str, float]:
    """Run this file as a script (:func:`main`) with ``python``, in the environment ``env``
    (default: this one), so that the notebook runs in a process of its own: in a bare venv,
    with variables of its own, or apart from the calling command's jax. Returns the run's
    summary (:meth:`Executed.summary`; a failed start reads as a failed run), the tail of
    its standard error and its wall seconds, start included."""
    t0 = time.perf_counter()
    flags = ["--allow-errors"] if allow_errors else []
    # ``-P``: the file's folder is not put on the path (a bare venv has no casebook)
    proc = subprocess.run(
        [str(python), "-P", __file__, str(notebook), str(out), *flags],
        capture_output=True,
        text=True,
        env=None if env is None else dict(env),
        cwd=Path(notebook).parent,
    )
    seconds, summary = time.perf_counter() - t0, Path(f"{out}.json")
    if not summary.exists():
        return {"passed": False, "seconds": 0.0, "failed_cells": []}, proc.stderr[-4000:], seconds
    return json.loads(summary.read_text()), proc.stderr[-4000:], seconds


def main(argv: list[str]) -> int:
    """``python executor.py NOTEBOOK OUT [--allow-errors]``: execute NOTEBOOK,
    write it executed to OUT and the run's summary beside it (``OUT.json``); exit 1 if a
    cell failed. Runnable as a plain script, in a venv without ``casebook``."""
    args = list(argv)
    allow = "--allow-errors" in args
    args = [a for a in args if a != "--allow-errors"]
    notebook, out = Path(args[0]), Path(args[1])
    import nbformat

    run = execute(notebook, allow_errors=allow)
    nbformat.write(run.notebook, out)
    Path(f"{out}.json").write_text(json.dumps(run.summary(), indent=1) + "\n")
    for cell in run.errors:
        print(f"cell {cell.index}: {cell.error}", file=sys.stderr)
    if run.log:
        print(f"the kernel's standard error, last lines:\n{run.log}", file=sys.stderr)
    return 0 if run.passed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The book's commands: ``python3 -m casebook COMMAND [ARGS]``, with Python 3.12 or newer.

  book               set up, then build the HTML with warnings as errors (cached execution,
                     invalidated when casebook/, the manifest or the lock changes)
  test [PATH ...]    set up, then ``pytest -n auto --nbmake notebooks/ book/ tests/`` (every
                     executed page as a test, plus the unit tests, in parallel; benchmark
                     cells run alone); PATHs replace the defaults
  setup              create .venv from the hashed lock, install casebook (editable), and
                     fetch the historical wheels; idempotent
  fetch              download, verify and unpack the historical wheels of the manifest, and
                     build the era stacks (one venv per case, with Python 3.12)
  device             print jax's version and devices in .venv (with --gpu: fail without a GPU)
  lock               regenerate requirements.txt and requirements-gpu.txt from pyproject.toml
  latest [--report F]  run the board and the pages on the newest releases; say what differs
  colab-sim [PAGE ...] run pages as Colab would: a bare venv, casebook from the set-up cell
  sync [--check]     write everything derived from the case folders and the package: each
                     page's card, exercise answers, program blocks, set-up cell and MyST
                     twin; the README and intro tables; the Errors, API and workshop-plan
                     pages (--check: list what is stale, exit 1)
  check-corpus [...] run check_optimizer over the corpus of real set-ups (see --help)
  bench [--suite]    time the book itself: release-run overhead, each page (twice), the
                     spread of every benchmark claim, and (--suite) the test command
  profile [PAGE ...] run each page once, cell by cell, and print where its time goes (kernel
                     start, imports, era runs, release runs, benchmarks, traces) and the
                     slowest cells
  pool [stop]        list the machine's warm release servers (one per environment, shared
                     by every kernel; each ends after 5 idle minutes), or stop them
  explain [TEXT]     read a traceback (argument, --file F or standard input) and print the
                     case that explains it: today's wording, the fix as code, the link
  new KEY ...        scaffold a case folder, its notebook and its entries, then sync
                     (``new-case`` is the same; see CONTRIBUTING.md)

``--gpu`` (with setup, book, test, device) uses the CUDA 13 lock, requirements-gpu.txt.

This module only dispatches: each command is a function of the module that owns its
concern, imported when the command runs. It and :mod:`casebook.tools.environment` use
only the standard library, so the commands run on a fresh machine that has nothing but
Python, and explain themselves on an old one.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
from collections.abc import Callable

from casebook.tools import environment

Command = Callable[[list[str], bool], object]


def _here(module: str, function: str, *, args: bool = True, gpu: bool = False) -> Command:
    """A command run in this interpreter: ``module.function``, called with the
    command's arguments (``args``) and the ``--gpu`` flag (``gpu``) where it takes them."""

    def command(argv: list[str], on_gpu: bool) -> object:
        target = getattr(importlib.import_module(module), function)
        given = ([argv] if args else []) + ([on_gpu] if gpu else [])
        return target(*given)

    return command


def _in_venv(module: str) -> Command:
    """A command that needs jax: set up, then ``python -m MODULE ARGS`` in ``.venv``."""
    return lambda argv, on_gpu: environment.in_venv(module, argv, on_gpu)


COMMANDS: dict[str, Command] = {
    "setup": _here("casebook.tools.environment", "setup", args=False, gpu=True),
    "fetch": _here("casebook.releases", "fetch_command"),
    "book": _here("casebook.tools.book", "build", args=False, gpu=True),
    "test": _here("casebook.tools.suite", "test", gpu=True),
    "device": _here("casebook.tools.environment", "device", args=False, gpu=True),
    "lock": _here("casebook.tools.environment", "lock", args=False),
    "latest": _here("casebook.status.latest", "main"),
    "colab-sim": _here("casebook.tools.colabsim", "main"),
    "sync": _in_venv("casebook.sync"),
    "bench": _in_venv("casebook.status.selfbench"),
    "profile": _in_venv("casebook.status.profile"),
    "check-corpus": _in_venv("casebook.corpus"),
    "pool": _here("casebook.releases._pool", "main"),
    "explain": _here("casebook.explain", "main"),
    "workshop": _in_venv("casebook.workshop"),
    "new": _here("casebook.sync.scaffold", "main"),
    "new-case": _here("casebook.sync.scaffold", "main"),
}


def main(argv: list[str]) -> None:
    """Check the Python, then run ``argv[0]`` with the rest (``--gpu`` taken out)."""
    environment.check_python()
    if not argv or argv[0] not in COMMANDS:
        sys.exit(__doc__)
    gpu = "--gpu" in argv[1:]
    args = [a for a in argv[1:] if a != "--gpu"]
    try:
        code = COMMANDS[argv[0]](args, gpu)
    except subprocess.CalledProcessError as e:
        sys.exit(e.returncode)
    if isinstance(code, int) and code:
        sys.exit(code)


if __name__ == "__main__":
    main(sys.argv[1:])

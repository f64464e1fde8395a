"""The book's commands: ``python3 -m casebook COMMAND [ARGS]``, with Python 3.12 or newer.

Read, run and write cases:

  setup [--lock]     the whole environment, idempotently: .venv from the hashed lock,
                     casebook (editable), the releases' and eras' environments, then the
                     device jax runs on. --lock first re-locks requirements*.txt from
                     pyproject.toml (the newest releases)
  test [--fresh] [--shard K/N] [--latest|--colab-sim|--corpus] [PATH ...]
                     set up, then ``pytest -n auto --nbmake notebooks/ book/ tests/`` (pages
                     and unit tests in parallel; benchmark cells alone); a page whose inputs
                     are unchanged since its green run passes from that record (--fresh, or
                     CI=true: prove every page again); --shard K/N runs the K-th of N
                     balanced parts; PATHs replace the defaults. Tests off the lock or the
                     clone: --latest [--report F], the board and pages on the newest
                     releases (what differs); --colab-sim [PAGE ...], pages in a bare venv as
                     in Colab; --corpus [...], check_optimizer on a corpus of real set-ups
  book               set up, then build the HTML with warnings as errors (execution cached
                     page by page, a page run again when anything its run read changed)
  explain [TEXT]     read a traceback (argument, --file F or standard input) and print the
                     case that explains it: today's wording, the fix as code, the link
  new KEY ...        scaffold a case folder, its notebook and its entries, then sync
  sync [--check]     write everything derived from the case folders and the package: each
                     page's card, exercise answers, program blocks, set-up cell and MyST
                     twin; the README and intro tables; the Errors and workshop-plan
                     pages (--check: list what is stale, exit 1)

Maintain the book's measurements:

  bench [--suite] [--profile] [PAGE ...]
                     time the book itself: release-run overhead, each page (twice), the
                     spread of every benchmark claim, and (--suite) the test command; with
                     --profile, each page once, cell by cell: where its time goes and the
                     slowest cells
  workshop [...]     the student and teacher editions, their timing (--colab-sim,
                     --measure) and the plan (--plan); see --help

``--gpu`` (with setup, book, test) uses requirements-gpu.txt (CUDA 13); no GPU stops it.
A command of an older book stops with its new spelling.

This module only dispatches: each command is a function of the module that owns its
concern, imported when the command runs. It and ``casebook.maintainer.tools.environment`` use
only the standard library, so the commands run on a fresh machine that has nothing but
Python, and explain themselves on an old one.

An installed ``casebook`` (``pip install casebook``) has the reader's part: explain, and
setup (the releases' and eras' environments). The rest needs a clone (``pyproject.toml`` leaves
``casebook.maintainer.tools`` and the maintainer's folders out of the wheel): asked for it, it says
in one line how to get one, and exits with 2.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import subprocess
import sys
import textwrap
from dataclasses import dataclass

from casebook.lock import check_python

SETUP = "casebook.maintainer.tools.environment"
"""The set-up, which a command that needs jax runs first (a clone's)."""


@dataclass(frozen=True)
class Command:
    """``module.function``, called with the command's arguments (``args``) and the
    ``--gpu`` flag (``gpu``) where it takes them; with ``venv``, ``python -m module ARGS``
    in ``.venv`` after the set-up instead (the commands that need jax). ``own_help``: the
    command's own parser answers ``--help``; for the others :func:`main` prints
    ``usage``, so that ``--help`` never runs a build, a set-up or a sync. ``wheel``: what
    an installed package, which lacks ``module``, runs instead."""

    module: str
    function: str = "main"
    args: bool = True
    gpu: bool = False
    venv: bool = False
    own_help: bool = False
    wheel: Command | None = None

    def installed(self) -> bool:
        """Whether this installation has the modules the command runs (a wheel has only
        the reader's part of the package)."""
        needed = [SETUP, self.module] if self.venv else [self.module]
        try:
            return all(importlib.util.find_spec(name) is not None for name in needed)
        except ModuleNotFoundError:  # its folder is not installed
            return False

    def __call__(self, argv: list[str], on_gpu: bool) -> object:
        if self.venv:
            return importlib.import_module(SETUP).in_venv(self.module, argv, on_gpu)
        target = getattr(importlib.import_module(self.module), self.function)
        given = ([argv] if self.args else []) + ([on_gpu] if self.gpu else [])
        return target(*given)


def _here(
    module: str, function: str, *, args: bool = True, gpu: bool = False, own_help: bool = False
) -> Command:
    """A command run in this interpreter."""
    return Command(module, function, args=args, gpu=gpu, own_help=own_help)


def _in_venv(module: str, *, own_help: bool = False) -> Command:
    """A command that needs jax: set up, then ``python -m MODULE ARGS`` in ``.venv``."""
    return Command(module, venv=True, own_help=own_help)


COMMANDS: dict[str, Command] = {
    "setup": Command(
        SETUP,
        "setup_command",
        args=False,
        gpu=True,
        wheel=Command("casebook.releases", "fetch_command"),
    ),
    "book": _here("casebook.maintainer.tools.book", "build", args=False, gpu=True),
    "test": _here("casebook.maintainer.tools.suite", "test", gpu=True),
    "sync": _in_venv("casebook.maintainer.sync"),
    "bench": _in_venv("casebook.maintainer.tools.selfbench", own_help=True),
    "explain": _here("casebook.explain", "main", own_help=True),
    "workshop": _in_venv("casebook.maintainer.workshop", own_help=True),
    "new": _here("casebook.maintainer.sync.scaffold", "main", own_help=True),
}

MOVED: dict[str, tuple[str, Command | None]] = {
    # an older book's command: its spelling today, and the mode that spelling runs
    "fetch": ("setup", None),
    "device": ("setup", None),
    "lock": ("setup --lock", _here(SETUP, "lock", args=False)),
    "latest": ("test --latest", _here("casebook.maintainer.tools.latest", "main", own_help=True)),
    "colab-sim": ("test --colab-sim", _here("casebook.maintainer.tools.colabsim", "main")),
    "check-corpus": ("test --corpus", _in_venv("casebook.maintainer.corpus", own_help=True)),
    "new-case": ("new", None),
    "profile": ("bench --profile", None),
}
MODES = {tuple(new.split()): mode for new, mode in MOVED.values() if mode}
"""A flag right after a command that runs another part of its concern with the arguments
after it: ``setup --lock``, ``test --colab-sim PAGE``."""

HELP = ("-h", "--help")
HELP_TEXT = __doc__.partition("\n\nThis module only dispatches")[0]
"""What ``--help`` prints: this module's text up to its notes for the book's developers."""


def usage(command: str) -> str:
    """``command``'s entry in this module's text (and the ``--gpu`` line where it takes the
    flag): what ``python3 -m casebook COMMAND --help`` prints for a command that has no
    parser of its own."""
    lines = __doc__.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"  {command} "))
    # the signature, two spaces, then the description, which goes on in the deeper lines
    signature, _, first = lines[start].strip().partition("  ")
    words = first.split()
    for line in lines[start + 1 :]:
        if not line.startswith("   "):
            break
        words += line.split()
    text = f"usage: python3 -m casebook {signature}\n\n" + textwrap.fill(" ".join(words), 88)
    gpu = next(line for line in lines if line.startswith("``--gpu``"))
    return f"{text}\n\n{gpu}" if COMMANDS[command].gpu else text


def needs_clone(command: str) -> str:
    """The one line that says ``command`` is a maintainer's and how to get a clone."""
    try:
        urls = importlib.metadata.metadata("casebook").get_all("Project-URL") or []
    except importlib.metadata.PackageNotFoundError:
        urls = []
    source = next((u.split(",", 1)[1].strip() for u in urls if u.startswith("Source,")), "")
    clone = f"git clone {source} && cd {source.rsplit('/', 1)[-1]}" if source else "clone it"
    return (
        f"casebook {command}: this command needs a clone of the book's repository (the "
        f"installed package has only the reader's part): {clone} && python3 -m casebook "
        f"{command}"
    )


def main(argv: list[str]) -> None:
    """Check the Python, then run ``argv[0]`` (or its mode, ``MODES``) with the rest
    (``--gpu`` taken out)."""
    check_python()
    if argv[:1] and argv[0] in HELP:  # asked for: the usage, on standard output
        print(HELP_TEXT)
        return
    if argv[:1] and argv[0] in MOVED:
        sys.exit(f"casebook {argv[0]} is now: python3 -m casebook {MOVED[argv[0]][0]}")
    if not argv or argv[0] not in COMMANDS:
        sys.exit(HELP_TEXT)
    name, gpu = argv[0], "--gpu" in argv[1:]
    args = [a for a in argv[1:] if a != "--gpu"]
    mode = MODES.get((name, args[0])) if args else None
    command, args = (mode, args[1:]) if mode else (COMMANDS[name], args)
    if not command.installed():
        if command.wheel is None:
            print(needs_clone(name), file=sys.stderr)
            sys.exit(2)
        command = command.wheel
    if not command.own_help and any(a in HELP for a in args):
        print(usage(name))
        return
    try:
        code = command(args, gpu)
    except subprocess.CalledProcessError as e:
        sys.exit(e.returncode)
    if isinstance(code, int) and code:
        sys.exit(code)


if __name__ == "__main__":
    main(sys.argv[1:])

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
  sync               rewrite every page's set-up cell from _config.yml, and its MyST twin
  check-corpus [...] run check_optimizer over the corpus of real set-ups (see --help)
  bench [--suite]    time the book itself: release-run overhead, each page (twice), the
                     spread of every benchmark claim, and (--suite) the test command

``--gpu`` (with setup, book, test, device) uses the CUDA 13 lock, requirements-gpu.txt.

This module and the ones it imports first use only the standard library, so the commands
run on a fresh machine that has nothing but Python, and explain themselves on an old one.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from casebook import environment

ROOT = environment.ROOT


def fetch() -> None:
    from casebook.releases import ReleaseError, eras
    from casebook.releases import fetch as fetch_releases

    try:
        fetch_releases()
        eras.ensure_all()
    except ReleaseError as e:
        sys.exit(f"casebook fetch: {e}")


def device(gpu: bool = False) -> None:
    """Print what the environment's jax runs on; with ``gpu``, fail unless it is a GPU
    (so a GPU job whose CUDA plugin failed to load does not quietly test the CPU)."""
    code = (
        "import jax; print(f'jax {jax.__version__}, backend {jax.default_backend()}: '"
        " + ', '.join(d.device_kind for d in jax.devices()))"
    )
    if gpu:
        code += (
            "\nif jax.default_backend() != 'gpu': raise SystemExit("
            "'casebook device --gpu: jax found no GPU; is the NVIDIA driver visible, and "
            "did `python3 -m casebook setup --gpu` run?')"
        )
    environment.sh([environment.venv_python(), "-c", code])


def book(gpu: bool = False) -> None:
    from casebook import buildcache

    py = environment.setup(gpu)
    if buildcache.invalidate_if_stale(ROOT):
        print("casebook: casebook/, the manifest or the lock changed: executing every page again")
    t0 = time.perf_counter()
    environment.sh(
        [
            py.parent / "jupyter-book",
            "build",
            ROOT,
            "--builder",
            "html",
            "--warningiserror",
            "--nitpick",
            "--keep-going",
        ],
        cwd=ROOT,
    )
    index = ROOT / "_build" / "html" / "index.html"
    print(f"casebook: book built in {time.perf_counter() - t0:.0f} s; open {index}")


PARALLEL = ["-n", "auto", "--maxprocesses", "4", "--dist", "load"]
"""pytest-xdist: one worker per core, at most four (each holds jax and warm servers)."""

TEST_ARGS = [*PARALLEL, "--nbmake", "notebooks/", "book/", "tests/"]
"""What the test command hands to pytest (after set-up) when no paths are given."""


def run_tests(py: str | Path, args: list[str]) -> None:
    """``pytest ARGS`` with the suite lock on (:mod:`casebook.suite`): benchmark cells
    time alone while the rest runs in parallel."""
    import tempfile

    from casebook import suite

    with tempfile.TemporaryDirectory(prefix="casebook-suite-") as tmp:
        env = {**os.environ, suite.LOCK_ENV: str(Path(tmp) / "suite.lock")}
        environment.sh([py, "-m", "pytest", *args], cwd=ROOT, env=env)


def test(paths: list[str], gpu: bool = False) -> None:
    py = environment.setup(gpu)
    run_tests(py, [*PARALLEL, "--nbmake", *paths] if paths else TEST_ARGS)


def _in_venv(module: str, args: list[str]) -> None:
    py = environment.setup()
    environment.sh([py, "-m", module, *args], cwd=ROOT)


def _exit_code(code: int) -> None:
    if code:
        sys.exit(code)


def main(argv: list[str]) -> None:
    environment.check_python()
    if not argv or argv[0] not in COMMANDS:
        sys.exit(__doc__)
    gpu = "--gpu" in argv[1:]
    args = [a for a in argv[1:] if a != "--gpu"]
    try:
        COMMANDS[argv[0]](args, gpu)
    except subprocess.CalledProcessError as e:
        sys.exit(e.returncode)


def _latest(args: list[str]) -> None:
    from casebook import latest

    _exit_code(latest.main(args))


def _colab_sim(args: list[str]) -> None:
    from casebook import colabsim

    _exit_code(colabsim.main(args))


COMMANDS = {
    "setup": lambda a, gpu: environment.setup(gpu),
    "fetch": lambda a, gpu: fetch(),
    "book": lambda a, gpu: book(gpu),
    "test": test,
    "device": lambda a, gpu: device(gpu),
    "lock": lambda a, gpu: environment.lock(),
    "latest": lambda a, gpu: _latest(a),
    "colab-sim": lambda a, gpu: _colab_sim(a),
    "sync": lambda a, gpu: _in_venv("casebook.pairs", a),
    "bench": lambda a, gpu: _in_venv("casebook.selfbench", a),
    "check-corpus": lambda a, gpu: _in_venv("casebook.corpus", a),
    "new-case": lambda a, gpu: _exit_code(__import__("casebook.scaffold").scaffold.main(a)),
}


if __name__ == "__main__":
    main(sys.argv[1:])

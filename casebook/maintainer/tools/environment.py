"""The book's own environment: a supported Python, ``.venv`` synced to the hashed lock, the releases.

Standard library only, and importable on any Python 3, so that ``python3 -m casebook``
can run on a fresh machine that has nothing installed. Reading the lock, and the check
that stops on a Python that is too old, are :mod:`casebook.lock`'s (they ship with the
package; this module, like the rest of ``casebook.maintainer.tools``, lives only in a clone).

* :func:`setup` creates ``.venv`` with the running interpreter, installs the lock's uv
  into it (pip, ``--require-hashes``), then lets uv make ``.venv`` exactly the lock and
  ``casebook`` in editable mode (``uv pip sync``, every hash verified, every module
  compiled to bytecode; a second run checks and changes nothing, in about two seconds),
  and builds the historical releases' and eras' environments (:data:`FETCH`); with
  ``gpu``, it syncs the CUDA 13 lock and stops where jax finds no GPU (:func:`device`).
* :func:`lock` (``setup --lock``) regenerates ``requirements.txt`` (and the CUDA 13
  variant) from ``pyproject.toml``.
"""

from __future__ import annotations

import datetime
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from casebook.lock import (
    GPU_REQUIREMENTS,
    PREFERRED,
    PYPROJECT,
    REQUIREMENTS,
    SUPPORTED,
    check_python,
    dotted,
)
from casebook.project import ROOT

VENV = Path(os.environ.get("CASEBOOK_VENV", ROOT / ".venv"))


def venv_python(venv: Path = VENV) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


PAGE_TESTS = ["-m", "pytest", "--nbmake", "-q", "-p", "no:cacheprovider"]
"""The arguments of an interpreter that runs pages as tests, one pytest run (the page
runs of ``casebook.maintainer.tools.pageruns``, the bench command and ``casebook test --latest``)."""

FETCH = ["-c", "from casebook.releases import fetch_command; fetch_command()"]
"""A venv interpreter's arguments that build the environments of the releases and eras."""


def sh(cmd: list, drop: str | None = None, **kw) -> None:
    """Run ``cmd`` (echoed first), failing on a non-zero exit. With ``drop``, its output
    and errors are passed through line by line, less every line that holds ``drop``."""
    args = [str(c) for c in cmd]
    print("+", " ".join(args), flush=True)
    if drop is None:
        subprocess.run(args, check=True, **kw)
        return
    with subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw
    ) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            if drop not in line:
                sys.stdout.write(line)
                sys.stdout.flush()
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, args)


def _venv_version(venv: Path) -> str:
    cfg = venv / "pyvenv.cfg"
    if not cfg.exists():
        return ""
    for line in cfg.read_text().splitlines():
        key, _, value = line.partition("=")
        if key.strip() in {"version", "version_info"}:
            return ".".join(value.strip().split(".")[:2])
    return ""


def setup(gpu: bool = False) -> Path:
    """Create the environment and build the releases' and eras'; return its interpreter.

    The venv is made with the Python running this command and remade when it was made
    with another minor version. ``gpu`` installs the CUDA 13 lock instead of the CPU one.
    """
    check_python()
    t0 = time.perf_counter()
    want_version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    if VENV.exists() and _venv_version(VENV) != want_version:
        print(
            f"casebook: {VENV} was made with Python {_venv_version(VENV) or '?'}; "
            f"remaking it with Python {want_version}",
            flush=True,
        )
        shutil.rmtree(VENV)
    py = venv_python()
    if not py.exists():
        sh([sys.executable, "-m", "venv", VENV])
    lock = GPU_REQUIREMENTS if gpu else REQUIREMENTS
    uv = py.parent / "uv"
    if not uv.exists() or not any(VENV.glob("lib/python*/site-packages/setuptools")):
        # once, by pip, hash-checked: the lock's uv, and its setuptools, which builds
        # casebook's editable install below (without build isolation; Python 3.12's venv
        # has none)
        pin = VENV / "uv-requirement.txt"
        pin.write_text(pinned_block(lock, "uv") + pinned_block(lock, "setuptools"))
        sh([py, "-m", "pip", "install", "-q", "--require-hashes", "--no-deps", "-r", pin])
    editable = VENV / "casebook-editable.txt"
    editable.write_text(f"-e {ROOT}\n")
    sync = [uv, "pip", "sync", "--python", py, "--system-certs", "--no-build-isolation"]
    sh([*sync, "--compile-bytecode", "--quiet", lock, editable])
    sh([py, *FETCH], cwd=ROOT)
    if gpu:
        device(gpu)
    print(
        f"casebook: environment ready in {time.perf_counter() - t0:.0f} s ({VENV}, "
        f"Python {want_version})",
        flush=True,
    )
    return py


def setup_command(gpu: bool = False) -> None:
    """``python3 -m casebook setup``: :func:`setup`, then what jax runs on."""
    setup(gpu)
    if not gpu:  # setup printed it
        device()


def pinned_block(lock: Path, package: str) -> str:
    """The lines of ``lock`` that pin ``package``: its ``==`` line and its hashes."""
    block: list[str] = []
    for line in lock.read_text().splitlines():
        if block and not line.startswith("    --hash="):
            break
        if block or line.startswith(f"{package}=="):
            block.append(line)
    if not block:
        raise ValueError(f"{lock.name} does not pin {package}")
    return "\n".join(block) + "\n"


def lock() -> None:
    """Regenerate ``requirements.txt`` and ``requirements-gpu.txt`` from ``pyproject.toml``
    with uv: the newest releases that resolve together today, for every supported Python
    (a universal lock with environment markers), every file's sha256 included; then set up
    with them."""
    check_python()
    uv = shutil.which("uv")
    if uv is None:
        py = setup()
        sh([py, "-m", "pip", "install", "-q", "uv"])
        uv = str(py.parent / "uv")
    today = datetime.date.today().isoformat()
    low = dotted(SUPPORTED[0])
    # Left out: jsonschema imports rfc3987-syntax (IRI formats, asked for by jupyter-events
    # alone), which compiles 38 lark grammars as it loads: 1.4-1.6 s of every process that
    # imports nbformat (test workers, nbclient, jupyter-book), 0.2 s without.
    compile_ = [
        uv,
        "pip",
        "compile",
        PYPROJECT,
        "--extra",
        "book",
        "--generate-hashes",
        "--no-header",
        "--upgrade",
        "--quiet",
        *("--no-emit-package", "rfc3987-syntax", "--no-emit-package", "lark"),
    ]
    sh([*compile_, "--universal", "--python-version", low, "-o", REQUIREMENTS], cwd=ROOT)
    sh(
        [
            *compile_,
            "--extra",
            "cuda13",
            "--python-platform",
            "x86_64-manylinux_2_28",
            "--python-version",
            dotted(PREFERRED),
            "-c",
            REQUIREMENTS,
            "-o",
            GPU_REQUIREMENTS,
        ],
        cwd=ROOT,
    )
    header = {
        REQUIREMENTS: (
            f"# The lock: every package the book runs on, exact pins and sha256 hashes, for\n"
            f"# Python {', '.join(dotted(v) for v in SUPPORTED)} on any platform (environment markers).\n"
        ),
        GPU_REQUIREMENTS: (
            "# The same lock with the CUDA 13 build of jax, for Linux x86_64 and Python "
            f"{dotted(PREFERRED)};\n# constrained to requirements.txt, so every shared pin agrees.\n"
        ),
    }
    for path, text in header.items():
        body = path.read_text()
        path.write_text(
            f"{text}# Locked on {today} from pyproject.toml by `python3 -m casebook setup --lock`.\n"
            f"# Install: pip install --require-hashes --no-deps -r {path.name}\n{body}"
        )
    print(f"casebook: locked on {today}: {REQUIREMENTS.name}, {GPU_REQUIREMENTS.name}")
    setup_command()


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
            "'casebook setup --gpu: jax found no GPU; is the NVIDIA driver visible?')"
        )
    sh([venv_python(), "-c", code])


def in_venv(module: str, args: list[str], gpu: bool = False) -> None:
    """Set up, then ``python -m MODULE ARGS`` in ``.venv`` (commands that need jax)."""
    py = setup(gpu)
    sh([py, "-m", module, *args], cwd=ROOT)

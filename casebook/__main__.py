"""The book's commands: ``python3 -m casebook {book,test,setup,fetch,device} [--gpu]``.

Standard library only, so it runs on a fresh machine that has nothing but Python 3.11:

* ``setup``  creates ``.venv`` (if missing), installs the exact pins of
  ``requirements.txt`` into it (again only when that file changed), then runs ``fetch``
  inside it. Idempotent: a second run takes a second or two.
* ``fetch``  downloads the historical release wheels of ``casebook/manifest.toml``,
  verifies their sha256 and unpacks them into ``.casebook-cache/``.
* ``book``   ``setup``, then builds the HTML with warnings as errors and prints where
  the index page is.
* ``test``   ``setup``, then ``pytest --nbmake notebooks/ book/ tests/`` (every notebook as a
  test, plus the unit tests). Extra arguments replace the default paths, e.g.
  ``python3 -m casebook test notebooks/01-optax-828-zero-nans-multisteps.ipynb``.
* ``device`` prints the jax version and the devices the environment's jax sees.

``--gpu`` (with ``setup``, ``book`` or ``test``) also installs the CUDA build of the
pinned jax from ``casebook/requirements-gpu.txt``, through the same set-up path.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = Path(os.environ.get("CASEBOOK_VENV", ROOT / ".venv"))
REQUIREMENTS = ROOT / "requirements.txt"
GPU_REQUIREMENTS = ROOT / "casebook" / "requirements-gpu.txt"
PYTHON_VERSION = (3, 11)


def _venv_python() -> Path:
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _sh(cmd: list[str], **kw) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], check=True, **kw)


def _check_python() -> None:
    if sys.version_info[:2] != PYTHON_VERSION:
        want = ".".join(map(str, PYTHON_VERSION))
        sys.exit(f"casebook: the pins in requirements.txt are for Python {want}; this is "
                 f"Python {sys.version.split()[0]}. Run the command with python{want}.")


def setup(gpu: bool = False) -> Path:
    """Create the environment and fetch the historical wheels; return its interpreter.

    With ``gpu``, the CUDA plugin pins are installed on top of ``requirements.txt``.
    """
    _check_python()
    t0 = time.perf_counter()
    py = _venv_python()
    if not py.exists():
        _sh([sys.executable, "-m", "venv", VENV])
    files = [REQUIREMENTS, GPU_REQUIREMENTS] if gpu else [REQUIREMENTS]
    stamp = VENV / ".casebook-requirements.sha256"
    want = hashlib.sha256(b"".join(f.read_bytes() for f in files)).hexdigest()
    if not stamp.exists() or stamp.read_text().strip() != want:
        _sh([py, "-m", "pip", "install", "--disable-pip-version-check", "-q",
             *(arg for f in files for arg in ("-r", f))])
        stamp.write_text(want)
    _link_repo(py)
    _sh([py, "-m", "casebook", "fetch"], cwd=ROOT)
    print(f"casebook: environment ready in {time.perf_counter() - t0:.0f} s ({VENV})", flush=True)
    return py


def _link_repo(py: Path) -> None:
    """Make ``import casebook`` work in every process of the environment (notebook
    kernels start in notebooks/, the book build in the root) with a ``.pth`` file."""
    purelib = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    pth = Path(purelib) / "casebook-repo.pth"
    if not pth.exists() or pth.read_text().strip() != str(ROOT):
        pth.write_text(f"{ROOT}\n")


def fetch() -> None:
    from casebook.releases import ReleaseError, fetch as fetch_releases

    try:
        fetch_releases()
    except ReleaseError as e:
        sys.exit(f"casebook fetch: {e}")


def device(gpu: bool = False) -> None:
    """Print what the environment's jax runs on; with ``gpu``, fail unless it is a GPU
    (so a GPU job whose CUDA plugin failed to load does not quietly test the CPU)."""
    code = ("import jax; print(f'jax {jax.__version__}, backend {jax.default_backend()}: '"
            " + ', '.join(d.device_kind for d in jax.devices()))")
    if gpu:
        code += ("\nif jax.default_backend() != 'gpu': raise SystemExit("
                 "'casebook device --gpu: jax found no GPU; is the NVIDIA driver visible, and "
                 "did `python3 -m casebook setup --gpu` run?')")
    _sh([_venv_python(), "-c", code])


def book(gpu: bool = False) -> None:
    py = setup(gpu)
    jb = py.parent / "jupyter-book"
    t0 = time.perf_counter()
    _sh([jb, "build", ROOT, "--builder", "html", "--warningiserror", "--nitpick",
         "--keep-going"], cwd=ROOT)
    index = ROOT / "_build" / "html" / "index.html"
    print(f"casebook: book built in {time.perf_counter() - t0:.0f} s; open {index}")


def test(paths: list[str], gpu: bool = False) -> None:
    py = setup(gpu)
    targets = paths or ["notebooks/", "book/", "tests/"]
    _sh([py, "-m", "pytest", "--nbmake", *targets], cwd=ROOT)


def main(argv: list[str]) -> None:
    commands = {"setup": lambda a, gpu: setup(gpu), "fetch": lambda a, gpu: fetch(),
                "book": lambda a, gpu: book(gpu), "test": test,
                "device": lambda a, gpu: device(gpu)}
    if not argv or argv[0] not in commands:
        sys.exit(__doc__)
    gpu = "--gpu" in argv[1:]
    try:
        commands[argv[0]]([a for a in argv[1:] if a != "--gpu"], gpu)
    except subprocess.CalledProcessError as e:
        sys.exit(e.returncode)


if __name__ == "__main__":
    main(sys.argv[1:])

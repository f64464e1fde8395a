"""Simulate a reader opening a page in Colab: ``casebook test --colab-sim [PAGE ...]``.

A fresh venv gets only what Colab preinstalls that matters here (jax, jaxlib, numpy,
scipy, matplotlib, IPython, and the kernel and runner Jupyter brings), at the versions of
the lock. Each page is copied out of the repository and executed top to bottom with
nbclient, so ``casebook`` can only come from the page's own set-up cell, which installs it
from a ``git+file://`` URL of this clone's ``HEAD`` (through ``$CASEBOOK_SOURCE``) and
builds the releases' and eras' environments in a per-user cache in the temp folder.
The venv and the executed pages live in ``_build/colab-sim/``, made anew on each run; the
runtime's user cache lives in the temp folder and is removed when the run ends.

Standard library only; it needs PyPI (like Colab), and runs from the committed state.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from casebook import lock, storage
from casebook.maintainer.tools import colab, environment, executor
from casebook.project import LIBRARIES, ROOT

WORK = ROOT / "_build" / "colab-sim"
#: What Colab preinstalls that these pages touch, plus the kernel and the runner.
PREINSTALLED = (
    "jax",
    "jaxlib",
    "numpy",
    "scipy",
    "matplotlib",
    "ipython",
    "ipykernel",
    "nbclient",
    "nbformat",
)
#: The pages CI opens in a simulated Colab: the first case, the last of the first five, the
#: two cases added after them (a leak with no exception, an era-only case), and the lessons.
DEFAULT_PAGES = (
    "notebooks/01-optax-828-zero-nans-multisteps.ipynb",
    "notebooks/05-diffrax-521-pidcontroller-multisteps.ipynb",
    "notebooks/06-optax-969-radam-eager-leak.ipynb",
    "notebooks/07-equinox-854-weak-type-closure-convert.ipynb",
    "book/lessons.ipynb",
)


def preinstalled_venv(venv: Path, with_jax: bool = True) -> tuple[Path, dict[str, str]]:
    """A venv holding what Colab preinstalls (:data:`PREINSTALLED`, at the lock's versions;
    ``with_jax=False`` leaves jax and jaxlib out), and pip, which the pages' set-up cell
    runs; its interpreter and the pins. uv installs them from its cache, compiled as pip
    would (a Colab image's are); they are the runtime, not the path a reader takes."""
    environment.sh([sys.executable, "-m", "venv", venv])
    py = environment.venv_python(venv)
    wanted = tuple(p for p in PREINSTALLED if with_jax or p not in ("jax", "jaxlib"))
    pins = lock.locked_versions(wanted)
    uv = environment.VENV / "bin" / "uv"  # the set-up's: this command runs outside .venv
    if not uv.exists():
        sys.exit("colab-sim: needs uv, which the set-up installs: `python3 -m casebook setup`")
    install = [uv, "pip", "install", "-q", "--compile-bytecode", "--python", py]
    environment.sh([*install, *(f"{n}=={v}" for n, v in pins.items())])
    return py, pins


def _head() -> str:
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()


def simulate(page_paths: list[str]) -> int:
    """Run each page as Colab would; print a line per page; return the number that failed."""
    lock.check_python()
    stale = [str(p.relative_to(ROOT)) for p in colab.pages() if not colab.is_in_sync(p)]
    if stale:
        sys.exit(
            f"colab-sim: stale set-up cell in {', '.join(stale)}; run "
            "`python3 -m casebook sync` and commit"
        )
    shutil.rmtree(WORK, ignore_errors=True)
    run_dir = WORK / "pages"
    run_dir.mkdir(parents=True)
    py, _ = preinstalled_venv(WORK / "venv")
    # The runtime's user cache (the releases' and eras' environments its pages build,
    # gigabytes) lives in the temp folder, not the checkout, and goes when the run ends.
    with storage.owned_tempdir("colab") as runtime:
        return _run_pages(page_paths, py, run_dir, bare_env(py, Path(runtime) / "user-cache"))


def _run_pages(page_paths: list[str], py: Path, run_dir: Path, env: dict[str, str]) -> int:
    """Run each page in the simulated runtime ``env``: the first alone (its set-up cell
    installs ``casebook``, which the others' then find), the rest two at a time (each in
    its own kernel, as two notebooks open in one Jupyter); the number that failed."""
    from concurrent.futures import ThreadPoolExecutor

    def run(page: str) -> tuple[dict, str, float]:
        copy = run_dir / Path(page).name
        shutil.copy(ROOT / page, copy)
        out = run_dir / f"executed-{copy.name}"
        return executor.in_subprocess(copy, out, python=py, env=env)

    def in_order(pool: ThreadPoolExecutor) -> Iterator[tuple[dict, str, float]]:
        yield from map(run, page_paths[:1])
        yield from pool.map(run, page_paths[1:])  # submitted once the first is done

    failed = 0
    with ThreadPoolExecutor(max_workers=2) as pool:
        for page, (summary, tail, seconds) in zip(page_paths, in_order(pool)):
            ok = summary["passed"]
            failed += not ok
            print(f"colab-sim: {'PASS' if ok else 'FAIL'} {page} ({seconds:.0f} s)", flush=True)
            if not ok:
                print(tail, flush=True)
    installed = subprocess.run(
        [py, "-m", "pip", "list", "--format=json"], capture_output=True, text=True, check=True
    ).stdout
    versions = {p["name"].lower(): p["version"] for p in json.loads(installed)}
    print(
        "colab-sim: ran on Python {}, {}".format(
            ".".join(map(str, sys.version_info[:3])),
            ", ".join(f"{n} {versions.get(n, '-')}" for n in (*LIBRARIES, "casebook")),
        )
    )
    print(f"colab-sim: {len(page_paths) - failed} passed, {failed} failed", flush=True)
    return failed


def bare_env(py: Path, cache: Path) -> dict[str, str]:
    """The environment of a simulated Colab runtime: none of the book's variables, the
    interpreter ``py`` first on ``PATH``, no pip cache, ``cache`` as the user's cache,
    and ``$CASEBOOK_SOURCE`` pointing at this clone's ``HEAD``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CASEBOOK_", "PYTHON", "VIRTUAL_ENV", "JAX_", "PIP_"))
    }
    return env | {
        "CASEBOOK_SOURCE": f"git+file://{ROOT}@{_head()}",
        "XDG_CACHE_HOME": str(cache),
        "PIP_NO_CACHE_DIR": "1",
        "PATH": f"{py.parent}{os.pathsep}{env.get('PATH', '')}",
    }


def main(argv: list[str]) -> int:
    """``test --colab-sim [PAGE ...]``: the pages to run (default: :data:`DEFAULT_PAGES`: cases 1,
    5, 6 and 7, the lessons)."""
    return 1 if simulate(list(argv) or list(DEFAULT_PAGES)) else 0

"""Running the student editions to time them: in simulated Colab runtimes, and here.

``python3 -m casebook workshop --colab-sim [--without-jax]`` runs each student edition in
a runtime of its own, as Colab gives each notebook one: a copy of a venv holding what
Colab preinstalls (with jax, or without it), an empty pip cache and an empty casebook
cache; the set-up cell installs ``casebook`` from this clone's ``HEAD`` with the extras the
edition needs, and each historical release or era downloads on first use. ``--measure``
runs them in this clone's venv instead (casebook installed, caches warm): what a
participant's laptop does after the set-up. Both store their figures with
:func:`casebook.maintainer.workshop.timing.record`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from casebook import lock, storage
from casebook.maintainer.tools import colabsim, environment, executor
from casebook.maintainer.workshop import build, timing

__all__ = ["colab", "here"]


def colab(with_jax: bool = True) -> int:
    """Time every student edition in a fresh simulated Colab runtime; the failures."""
    lock.check_python()
    work = colabsim.WORK
    shutil.rmtree(work, ignore_errors=True)
    base = work / "preinstalled"
    _, pins = colabsim.preinstalled_venv(base, with_jax)
    failed, pages = 0, dict[str, dict]()
    for edition in build(work / "editions"):
        runtime = work / f"runtime-{edition.name}"
        shutil.copytree(base, runtime / "venv", symlinks=True)
        py = environment.venv_python(runtime / "venv")
        notebook = runtime / f"{edition.name}.ipynb"
        shutil.copy(work / "editions" / "student" / notebook.name, notebook)
        env = colabsim.bare_env(py, runtime / "cache")
        summary, tail, seconds = executor.in_subprocess(
            notebook, runtime / "executed.ipynb", python=py, env=env
        )
        failed += _report(
            edition.name, runtime / "executed.ipynb", summary["passed"], seconds, tail, pages
        )
        shutil.rmtree(runtime / "venv", ignore_errors=True)
        shutil.rmtree(runtime / "cache", ignore_errors=True)
    kind = "colab-sim" if with_jax else "colab-sim-without-jax"
    print(f"workshop: figures in {timing.record(kind, pages, pins)}")
    return failed


def here() -> int:
    """Time every student edition in this clone's venv (after the set-up); the failures."""
    failed, pages = 0, dict[str, dict]()
    with storage.owned_tempdir("workshop") as tmp:
        for edition in build(Path(tmp)):
            notebook = Path(tmp) / "student" / f"{edition.name}.ipynb"
            executed = Path(tmp) / f"{edition.name}.executed.ipynb"
            summary, tail, seconds = executor.in_subprocess(notebook, executed)
            failed += _report(edition.name, executed, summary["passed"], seconds, tail, pages)
    versions = lock.locked_versions(("jax", "jaxlib", "optax", "equinox", "diffrax"))
    print(f"workshop: figures in {timing.record('', pages, versions)}")
    return failed


def _report(name: str, executed: Path, ok: bool, seconds: float, tail: str, pages: dict) -> int:
    figures = timing.summarize(json.loads(executed.read_text())) if executed.exists() else {}
    pages[name] = figures | {"passed": ok, "wall_s": round(seconds, 1)}
    cold = figures.get("cold_start_s")
    print(
        f"workshop: {'PASS' if ok else 'FAIL'} {name} ({seconds:.0f} s, cold start {cold} s)",
        flush=True,
    )
    if not ok:
        print(tail, flush=True)
    return int(not ok)

"""Run code on a target in a fresh interpreter, and check where its packages came from.

Why a subprocess: a notebook kernel has the current stack imported, and Python cannot
hold two versions of ``optax`` in one process. So :func:`run` runs the child program
(:mod:`casebook.releases._child`) on the code with the target's own interpreter: today's
for the current stack, or that of the target's environment (a release, a patched release
or an era, built by :mod:`casebook.releases._envs`), with nothing on ``PYTHONPATH`` but the
link to the child program. Each run is a new process: jax runs on CPU unless asked
otherwise (so a notebook on a GPU never has two processes competing for the accelerator's
memory), x64 is chosen per run, a hang is killed at the time limit, a crash cannot take the
kernel down, and the versions reported are those the code *actually imported*, with the
file each came from, checked against where they must come from
(:func:`casebook.releases._execute.check_origins`), so
a shadowed release, era or current stack cannot go unnoticed.
"""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from casebook.releases import _pool, _targets
from casebook.releases._outcome import Outcome
from casebook.releases._targets import CURRENT, Target


def run(
    code: str,
    target: Target = CURRENT,
    *,
    timeout: float = 120.0,
    cpu: bool = True,
    x64: bool = False,
    env: Mapping[str, str] | None = None,
    inputs: Mapping[str, Any] | None = None,
) -> Outcome:
    """Run ``code`` on ``target`` in a child process and return its :class:`Outcome`.

    ``target`` is a manifest spec (``"optax==0.1.9"``), a :class:`PatchedRelease`,
    :data:`CURRENT` for the installed stack, or an era (``"era:optax-828"``: the whole
    stack of the report's day). Each but the current stack runs in an environment of its
    own, built by uv on first use (``casebook.releases._envs``). A variable named ``result`` left by the
    code comes back as ``Outcome.result`` (JSON: arrays become lists); ``inputs`` (JSON
    values) are set as global variables of the code before it runs. An exception in the
    code is *recorded*, not raised; a hang raises :class:`RunTimeout`, a dead process
    :class:`RunCrashed`, and an import of jax, optax, equinox, diffrax (or the others
    it reports) from anywhere but the requested release, era or current stack
    :class:`OverlayShadowed`. Runs fork from a warm server of their environment
    (``casebook.releases._pool``), except with ``env``, which needs a fresh interpreter.
    A warm run on today's jax shares one persistent compilation cache
    (``_pool.shared_compile_cache``), so what an earlier run compiled is read, not compiled.

    One run passes through each module once, one way: the target is resolved
    (``_targets.place_of``, with ``eras`` for an era), its environment placed (``_envs``),
    the pool picks the server (``_pool``), and ``_execute`` runs the child, reads its
    outcome and checks where its packages came from.

    Args:
        code: the Python source to run (dedented first).
        target: the release: a manifest spec, ``"current"``, a
            :class:`PatchedRelease` or an era (``"era:optax-828"``).
        timeout: seconds before the run is killed.
        cpu: run jax on the CPU (the default), so a page on a GPU never has two
            processes competing for the accelerator's memory.
        x64: run with ``JAX_ENABLE_X64=1``.
        env: more environment variables for the child (a cold run).
        inputs: ``{name: JSON value}``, set as globals of the code before it runs.

    Returns:
        The :class:`Outcome`: whether it raised, what, where, what it printed, the
        versions it imported and its ``result``.

    Raises:
        RunTimeout: the code ran past ``timeout``.
        RunCrashed: the child died without an outcome.
        OverlayShadowed: a reported package was imported from somewhere else.
        ReleaseNotCached: the target's environment is not built, and uv's cache lacks its
            wheels (``python3 -m casebook setup``).
        UnknownRelease: the release is not in the manifest (:class:`UnknownEra`: the
            era is in no case folder).
        EraPythonMissing: no interpreter of the era's Python was found.

    Examples:
        >>> outcome = run("print('hi'); result = {'x': [1, 2]}", inputs={})
        >>> outcome.ok, outcome.result, outcome.stdout
        (True, {'x': [1, 2]}, 'hi\\n')
        >>> run("n = N + 1; result = n", inputs={"N": 41}).result
        42
        >>> print(run("int('x')"))
        [current] ValueError: invalid literal for int() with base 10: 'x'
    """
    place = _targets.place_of(target)
    code = textwrap.dedent(code)
    return _pool.run(place, code, timeout=timeout, cpu=cpu, x64=x64, env=env, inputs=inputs)


def load_module_file(path: str | Path, name: str) -> ModuleType:
    """Import one source file as module ``name`` (for loading, say, an old release's
    ``wrappers.py`` beside the installed one, to time two versions in one process)."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path} as a module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module

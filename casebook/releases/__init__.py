"""Run code on a historical upstream release, in a subprocess, and check what happened.

A notebook kernel has the current stack imported, and Python cannot hold two versions of
``optax`` in one process; so a run starts a fresh interpreter of the target's own
environment and sends back a structured outcome. One module per concern:

* ``_targets``: the targets a run can name (:data:`CURRENT`, a release of the manifest,
  pinned by sha256, a release with one-line fixes, :func:`patched`, an era) and the
  environment of each (a release's: today's stack with the release's pin);
* ``_envs``: the one way a target is placed: an environment that uv builds from hashed
  pins, cached by their digest (``python3 -m casebook setup`` builds them all);
* ``_runner``: :func:`run` and its :class:`Outcome`, with the child
  program ``_child``;
* ``_expect``: :func:`expect`, :class:`VersionTable`,
  :func:`version_table`;
* :mod:`~casebook.releases.program` and ``_variants``: programs of
  named variants (modules of the case folders, :mod:`casebook.cases`), run on releases by
  :func:`program_table` and shown by :func:`show`;
* ``_magic``: the ``%%on_release`` cell magic
  (``%load_ext casebook.releases``; ``%%on_release?`` prints its options);
* :mod:`~casebook.releases.eras`: era stacks, the whole stack of the day an issue was
  reported (targets ``"era:optax-828"``);
* ``_pool`` and ``_server``: the warm servers runs fork from, one per environment and
  process, ended with it (``_pool.key_of`` says which runs share one); ``_execute``: a
  run asked of a server, or in a fresh interpreter instead, its outcome read and its
  packages' origins checked;
* ``casebook.releases.errors``: the errors, all :class:`ReleaseError` (or, for a
  failed expectation, :class:`ExpectationError`).

The page API is re-exported here (``__all__``), so notebooks write ``releases.run``
and ``releases.expect``. Importing this package uses the standard library only (no jax, no
IPython): the set-up command imports it before anything else is installed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from casebook.releases import _targets
from casebook.releases._envs import (
    REPO_ROOT as REPO_ROOT,
    Patch,
    cache_dir as cache_dir,
    running_from_checkout as running_from_checkout,
)
from casebook.releases._expect import (
    Asserted,
    Expected as Expected,
    VersionTable,
    asserted,
    expect,
    version_table,
)
from casebook.releases._outcome import Outcome
from casebook.releases._runner import load_module_file as load_module_file, run
from casebook.releases._targets import (
    MANIFEST as MANIFEST,
    PatchedRelease,
    Target as Target,
    load_manifest as load_manifest,
    patched,
    resolve as resolve,
    source_file,
)
from casebook.releases._variants import Source, program_table, run_program, show
from casebook.releases.errors import (
    EraBuildFailed,
    EraPythonMissing,
    ExpectationError,
    HashMismatch,
    OverlayShadowed,
    PatchError,
    ReleaseError,
    ReleaseNotCached,
    RunCrashed,
    RunTimeout,
    UnknownEra,
    UnknownRelease,
)

CURRENT = _targets.CURRENT
"""Target name for the current stack, the environment as installed (this interpreter's)."""

__all__ = [
    # running code on a release, and checking what happened
    "CURRENT",
    "Outcome",
    "expect",
    "asserted",
    "Asserted",
    "run",
    "source_file",
    "version_table",
    "VersionTable",
    "patched",
    "Patch",
    "PatchedRelease",
    # programs of named variants
    "program_table",
    "run_program",
    "show",
    "Source",
    # the %%on_release cell magic
    "load_ipython_extension",
    "on_release",
    # building the targets' environments
    "fetch_command",
    # errors
    "ReleaseError",
    "ExpectationError",
    "ReleaseNotCached",
    "UnknownRelease",
    "HashMismatch",
    "PatchError",
    "RunTimeout",
    "RunCrashed",
    "OverlayShadowed",
    "UnknownEra",
    "EraPythonMissing",
    "EraBuildFailed",
]
"""The names pages may use (``book/api.md`` documents exactly these). The names imported
``as`` themselves above stay importable here for the tests and the other folders of the
package, and are not the book's API."""


def fetch_command(args: list[str] | None = None, gpu: bool = False) -> None:
    """``python3 -m casebook setup`` of an installed package, and a clone's set-up's last
    step: the environment of every release of the manifest and of every era; a
    :class:`ReleaseError` ends the command with its message. Three are built at a time,
    online (``_envs.ensure`` with ``retry``: a failed build is tried again); then the
    environments of the same targets built from other pins (an older lock or manifest) are
    removed (``_sweep_stale``)."""
    import concurrent.futures
    import shutil
    import sys
    import time

    from casebook.releases import _envs, eras

    for old in ("releases", "patched", "wheels", "eras"):  # the cache's folders before envs/
        shutil.rmtree(cache_dir() / old, ignore_errors=True)
    targets = [*load_manifest(), *(era.spec for era in eras.load_eras().values())]
    t0 = time.perf_counter()
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
            envs = [_targets.environment(t) for t in targets]
            list(pool.map(lambda e: _envs.ensure(e, retry=True, online=True), envs))
    except ReleaseError as e:
        sys.exit(f"casebook setup: {e}")
    print(f"casebook: {len(targets)} environment(s) ready in {time.perf_counter() - t0:.0f} s")
    _sweep_stale(cache_dir() / "envs", {_envs.venv_dir(e).name for e in envs})


def _sweep_stale(folder: Path, ready: set[str]) -> list[str]:
    """Remove from ``folder`` what belongs to a target of ``ready`` (folders ``NAME-KEY``)
    under another key: its environment, failure record or scratch build of older pins.
    What no target of ``ready`` names (a patched release's, built by a page) stays.
    Returns the names removed."""
    import re
    import shutil

    stems = {name.rpartition("-")[0] for name in ready}
    removed = []
    for old in sorted(folder.glob("*")):
        m = re.fullmatch(r"(.+)-([0-9a-f]{16})(\..*)?", old.name)
        if m and m[1] in stems and f"{m[1]}-{m[2]}" not in ready:
            shutil.rmtree(old) if old.is_dir() else old.unlink()
            removed.append(old.name)
    return removed


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext casebook.releases`` registers the ``%%on_release`` cell magic."""
    from casebook.releases import _magic

    _magic.load_ipython_extension(ipython)


def __getattr__(name: str) -> Any:
    """``on_release`` (the magic, testable without a kernel) from :mod:`.magic`, imported
    on first use so that importing this package does not import IPython."""
    if name == "on_release":
        from casebook.releases._magic import on_release

        return on_release
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The module's names, ``on_release`` included (autodoc lists a package's members so)."""
    return sorted({*globals(), "on_release"})

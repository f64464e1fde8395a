"""Run code on a historical upstream release, in a subprocess, and check what happened.

A notebook kernel has the current stack imported, and Python cannot hold two versions of
``optax`` in one process; so a run starts a fresh interpreter with the chosen release
first on its path and sends back a structured outcome. One module per concern:

* :mod:`~casebook.releases.manifest`: the manifest of releases pinned by sha256, the
  cache, :func:`fetch` (``python3 -m casebook fetch``) and :func:`locate`;
* :mod:`~casebook.releases.patches`: releases with one-line fixes (:func:`patched`), and
  the targets a run can name (:data:`CURRENT`);
* :mod:`~casebook.releases.runner`: :func:`run` and its :class:`Outcome`, with the child
  program :mod:`~casebook.releases.child`;
* :mod:`~casebook.releases.expect`: :func:`expect`, :class:`VersionTable`,
  :func:`version_table`;
* :mod:`~casebook.releases.program` and :mod:`~casebook.releases.variants`: programs of
  named variants (modules of :mod:`casebook.programs`), run on releases by
  :func:`program_table` and shown by :func:`show`;
* :mod:`~casebook.releases.magic`: the ``%%on_release`` cell magic
  (``%load_ext casebook.releases``; ``%%on_release?`` prints its options);
* :mod:`~casebook.releases.eras`: era stacks, the whole stack of the day an issue was
  reported, in a venv of its own (targets ``"era:optax-828"``);
* :mod:`~casebook.releases.pool` and :mod:`~casebook.releases.server`: the warm servers
  runs fork from, one per environment;
* :mod:`~casebook.releases.errors`: the errors, all :class:`ReleaseError` (or, for a
  failed expectation, :class:`ExpectationError`).

Everything is re-exported here, so notebooks write ``releases.run`` and
``releases.expect``. Importing this package uses the standard library only (no jax, no
IPython): the set-up command imports it before anything else is installed.
"""

from __future__ import annotations

from typing import Any

from casebook.releases.errors import (
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
from casebook.releases.expect import Expected, VersionTable, expect, version_table
from casebook.releases.manifest import (
    MANIFEST,
    REPO_ROOT,
    SETUP_COMMAND,
    Release,
    cache_dir,
    fetch,
    load_manifest,
    locate,
    parse_spec,
    resolve,
    running_from_checkout,
    sha256_of,
    user_cache_dir,
)
from casebook.releases.patches import CURRENT, Patch, PatchedRelease, Target, patched
from casebook.releases.runner import REPORTED_PACKAGES, Outcome, load_module_file, run, source_file
from casebook.releases.variants import Source, program_table, run_program, show

__all__ = [
    "CURRENT",
    "MANIFEST",
    "REPORTED_PACKAGES",
    "REPO_ROOT",
    "SETUP_COMMAND",
    "EraPythonMissing",
    "ExpectationError",
    "Expected",
    "HashMismatch",
    "Outcome",
    "OverlayShadowed",
    "Patch",
    "PatchError",
    "PatchedRelease",
    "Release",
    "Source",
    "ReleaseError",
    "ReleaseNotCached",
    "RunCrashed",
    "RunTimeout",
    "Target",
    "UnknownEra",
    "UnknownRelease",
    "VersionTable",
    "cache_dir",
    "expect",
    "fetch",
    "load_ipython_extension",
    "load_manifest",
    "load_module_file",
    "locate",
    "on_release",
    "parse_spec",
    "patched",
    "program_table",
    "resolve",
    "run",
    "run_program",
    "running_from_checkout",
    "sha256_of",
    "show",
    "source_file",
    "user_cache_dir",
    "version_table",
]


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext casebook.releases`` registers the ``%%on_release`` cell magic."""
    from casebook.releases import magic

    magic.load_ipython_extension(ipython)


def __getattr__(name: str) -> Any:
    """``on_release`` (the magic, testable without a kernel) from :mod:`.magic`, imported
    on first use so that importing this package does not import IPython."""
    if name == "on_release":
        from casebook.releases.magic import on_release

        return on_release
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""The errors of :mod:`casebook.releases`, in one module so every part can raise them.

Each says what went wrong and, where there is one, the command that fixes it.
"""

from __future__ import annotations

__all__ = [
    "ExpectationError",
    "HashMismatch",
    "OverlayShadowed",
    "PatchError",
    "ReleaseError",
    "ReleaseNotCached",
    "EraBuildFailed",
    "EraPythonMissing",
    "RunCrashed",
    "RunTimeout",
    "UnknownEra",
    "UnknownRelease",
]


class ReleaseError(Exception):
    """Base class of every error this package raises about releases and runs."""


class UnknownRelease(ReleaseError):
    """The requested release is not in the manifest."""


class UnknownEra(UnknownRelease):
    """The requested era (``era:KEY``) is not in the manifest."""


class EraPythonMissing(ReleaseError):
    """No interpreter of the Python an environment needs was found (or could be installed)."""


class EraBuildFailed(ReleaseError):
    """A target's environment (an era's, a release's) failed to build from its pins; runs
    refuse it, without trying again, until ``python3 -m casebook setup`` tries once more."""


class ReleaseNotCached(ReleaseError):
    """The target's environment is not built, and uv's cache lacks its wheels: the set-up
    step builds it."""


class HashMismatch(ReleaseError):
    """A wheel does not have the sha256 its pin names (in the manifest, or a lock)."""


class PatchError(ReleaseError):
    """A one-line patch did not find exactly one occurrence of the line it replaces."""


class RunTimeout(ReleaseError):
    """The code ran past its time limit; the subprocess was killed."""


class RunCrashed(ReleaseError):
    """The subprocess died without reporting an outcome (e.g. a segfault)."""


class OverlayShadowed(ReleaseError):
    """The code imported a package from somewhere other than the requested release."""


class ExpectationError(AssertionError):
    """An outcome differs from what the book says about it."""

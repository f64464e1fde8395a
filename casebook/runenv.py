"""The environment through which a maintainer's run configures the package's runtime.

The test command (:mod:`casebook.maintainer.tools.suite`) and the bench set these for every
process they start, and a benchmark's subprocess reads them. Both sides name them from
here, so the reader's part of the package (which ships without
``casebook.maintainer.tools``) and the maintainer's commands agree.

Standard library only; imports nothing.
"""

from __future__ import annotations

__all__ = ["QUIET_MALLOC"]

QUIET_MALLOC: dict[str, str] = {
    "MALLOC_ARENA_MAX": "1",
    "MALLOC_MMAP_THRESHOLD_": str(32 << 20),
    "MALLOC_TRIM_THRESHOLD_": str(16 << 30),
    "MALLOC_TOP_PAD_": str(1 << 30),
}
"""glibc malloc settings for benchmarks and the test command's processes; why, in
``casebook.bench.QUIET_MALLOC``, where the book exports them."""

"""The variables through which a maintainer's run configures the package's runtime.

The test command (:mod:`casebook.maintainer.tools.suite`), the Colab simulation and the bench set
these for every process they start; the release pool and a benchmark's
subprocess read them. Both sides name them from here, so the reader's part of the package
(which ships without ``casebook.maintainer.tools``) and the maintainer's commands agree on one name.

Standard library only; imports nothing.
"""

from __future__ import annotations

__all__ = ["POOL_ENV", "POOL_IDLE_ENV", "POOL_MAX_ENV", "QUIET_MALLOC"]

QUIET_MALLOC: dict[str, str] = {
    "MALLOC_ARENA_MAX": "1",
    "MALLOC_MMAP_THRESHOLD_": str(32 << 20),
    "MALLOC_TRIM_THRESHOLD_": str(16 << 30),
    "MALLOC_TOP_PAD_": str(1 << 30),
}
"""glibc malloc settings for benchmarks and the test command's processes; why, in
``casebook.bench.QUIET_MALLOC``, where the book exports them."""

POOL_ENV = "CASEBOOK_POOL"
"""The folder of the warm release servers (``casebook.releases._pool``): the test command
gives its run one of its own, shared by every worker and kernel, and stops its servers at
the end (the repository's ``conftest.py``)."""

POOL_MAX_ENV = "CASEBOOK_POOL_MAX"
"""How many warm release servers a pool keeps at once (default
``casebook.releases._pool.MAX_SERVERS``). The test command and ``bench`` (``--profile`` too)
raise it (``casebook.maintainer.tools.suite.SUITE_POOL``), so that a run never stops a server it will
need again."""

POOL_IDLE_ENV = "CASEBOOK_POOL_IDLE"
"""Seconds a warm release server waits for its next run before it ends (default
``casebook.releases._pool.IDLE_SECONDS``). The test command sets its run's to outlast the
run (``SUITE_POOL``), and stops its servers itself at the end."""

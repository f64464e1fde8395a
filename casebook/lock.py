"""The lock the book is pinned to, and the Pythons it is resolved for.

``requirements.txt`` (and its CUDA 13 twin) pins every package the book runs on;
:mod:`casebook.maintainer.tools.environment` writes and installs them. This module only reads them,
for what a page reports (:mod:`casebook.status.stack`: whether it ran on the lock's
versions) and the board's message, so it ships with the package
while the set-up stays in a clone. The lock files exist only in a clone: an installed
package has none and asks only where it runs from a checkout.

Standard library only, and importable on any Python 3: ``python3 -m casebook`` calls
:func:`check_python` before anything else, to say clearly what to do on a Python that
is too old.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from casebook.project import ROOT

__all__ = [
    "GPU_REQUIREMENTS",
    "PREFERRED",
    "PYPROJECT",
    "REQUIREMENTS",
    "SUPPORTED",
    "check_python",
    "dotted",
    "locked_on",
    "locked_pins",
    "locked_versions",
    "python_problem",
]

REQUIREMENTS = ROOT / "requirements.txt"
GPU_REQUIREMENTS = ROOT / "requirements-gpu.txt"
PYPROJECT = ROOT / "pyproject.toml"

#: The Pythons the lock is resolved for (jax 0.11 and later need 3.12 or newer).
SUPPORTED = ((3, 12), (3, 13), (3, 14))
#: The Python of CI and of the docs.
PREFERRED = (3, 13)


def dotted(version: tuple[int, ...]) -> str:
    return ".".join(map(str, version))


def python_problem(version: tuple[int, int] | None = None) -> str | None:
    """Why this Python can't run the book, or ``None`` when it can."""
    version = version or (sys.version_info[0], sys.version_info[1])
    if version >= SUPPORTED[0]:
        return None
    names = ", ".join(dotted(v) for v in SUPPORTED)
    want = dotted(PREFERRED)
    return (
        f"casebook: this is Python {dotted(version)}; the book needs Python {names} "
        f"(jax 0.11 and later support Python 3.12 or newer).\n"
        f"Get Python {want} with one of:\n"
        f"  pyenv install {want}            (then: pyenv shell {want})\n"
        f"  uv python install {want}        (then: uv run --python {want} python -m casebook ...)\n"
        f"  your system's package, e.g. apt install python{want}, brew install python@{want}\n"
        f"  the installer from https://www.python.org/downloads/\n"
        f"and run the same command with it, e.g. python{want} -m casebook test"
    )


def check_python() -> None:
    """Exit with :func:`python_problem`'s message on an unsupported Python."""
    problem = python_problem()
    if problem:
        sys.exit(problem)


def locked_on(path: Path | None = None) -> str:
    """The date the lock was made, read from its header ('' if it has none).

    Args:
        path: the lock to read; ``None`` for :data:`REQUIREMENTS`, read when called.
    """
    for line in (path or REQUIREMENTS).read_text().splitlines()[:5]:
        if line.startswith("# Locked on "):
            return line.removeprefix("# Locked on ").split()[0]
    return ""


def locked_pins(path: Path | None = None) -> list[tuple[str, str, str]]:
    """``(name, version, marker)`` of every pin in a lock (``None``: :data:`REQUIREMENTS`,
    read when called); names normalized (PEP 503)."""
    pins = []
    for line in (path or REQUIREMENTS).read_text().splitlines():
        match = re.match(r"^([A-Za-z0-9_.-]+)==([^\s;\\]+)\s*(?:;\s*([^\\]+?))?\s*\\?$", line)
        if match:
            name = re.sub(r"[-_.]+", "-", match.group(1)).lower()
            pins.append((name, match.group(2), (match.group(3) or "").strip()))
    return pins


def locked_versions(
    names: tuple[str, ...] | None = None, path: Path | None = None
) -> dict[str, str]:
    """``{name: version}`` pinned by the lock (all pins, or just ``names``).

    This is where a page's "today's releases" come from: :func:`casebook.status.stack.ran_on`
    reads them into ``Stack.locked``, and a page compares the versions it ran on with those,
    never with a version written in the page, so moving the lock edits no page.

    Args:
        names: the packages to read (normalized names: ``"jax"``, ``"optax"``); ``None``
            for every pin. A name the lock does not pin is left out.
        path: the lock to read; ``None`` for :data:`REQUIREMENTS` (``requirements.txt``),
            looked up when called.

    Returns:
        ``{name: version}``, in the order of ``names`` (or of the lock).

    Examples:
        >>> import tempfile
        >>> lock = Path(tempfile.mkdtemp()) / "requirements.txt"
        >>> _ = lock.write_text("jax==0.13.0\\noptax==0.2.9\\n")
        >>> locked_versions(("optax", "jax", "diffrax"), path=lock)
        {'optax': '0.2.9', 'jax': '0.13.0'}
    """
    found = {name: version for name, version, _ in locked_pins(path)}
    return found if names is None else {n: found[n] for n in names if n in found}

"""Writing the book's own files whole or not at all.

A record, a stamp or a cache entry that a killed process or a full disk leaves half
written is worse than none: the next run would trust it. Everything the book stores goes
through :func:`write_atomic` (a file) or is built in a scratch directory and renamed into
place (a directory; see :mod:`casebook.releases._envs`), so a fault leaves the old file,
or nothing, behind.
Temporary folders follow the same rule: :func:`owned_tempdir` names each after its process,
so that :func:`leftovers` finds those a killed process could not remove.
Standard library only.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from pathlib import Path

__all__ = ["leftovers", "owned_tempdir", "process_alive", "remove_leftovers", "write_atomic"]


def write_atomic(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically (its folder made first): into a temporary file beside it, flushed to
    disk, then renamed over it. On any error (``ENOSPC``, say) the temporary file is
    removed, ``path`` keeps its old content (or stays absent) and the error propagates.

    Examples:
        >>> import tempfile, pathlib
        >>> target = pathlib.Path(tempfile.mkdtemp()) / "record.json"
        >>> write_atomic(target, "{}\\n").read_text()
        '{}\\n'
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, scratch = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(scratch, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(scratch)
        raise
    return path


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` still runs: a scratch directory or socket named after a pid
    that is gone is a leftover of a killed process, safe to remove."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


_OWNED = re.compile(r"^casebook-([a-z]+(?:-[a-z]+)*)-(\d+)-")
"""An :func:`owned_tempdir` folder's name: its kind (words joined by ``-``) and its pid."""


def owned_tempdir(kind: str, root: Path | None = None) -> tempfile.TemporaryDirectory[str]:
    """A temporary directory named after its kind and this process
    (``casebook-<kind>-<pid>-…``) in ``root`` (the temp folder), removed when the block
    ends, or at the latest when the process exits; if the process is killed first,
    :func:`leftovers` finds it by the pid in its name.

    Examples:
        >>> with owned_tempdir("doc") as tmp:
        ...     Path(tmp).name.startswith(f"casebook-doc-{os.getpid()}-")
        True
    """
    return tempfile.TemporaryDirectory(prefix=f"casebook-{kind}-{os.getpid()}-", dir=root)


def leftovers(root: Path | None = None) -> list[Path]:
    """The :func:`owned_tempdir` folders in ``root`` (the temp folder) whose process is
    gone: what a killed run left behind."""
    root = Path(root or tempfile.gettempdir())
    found = []
    for path in root.glob("casebook-*-*-*"):
        m = _OWNED.match(path.name)
        if m and path.is_dir() and not process_alive(int(m.group(2))):
            found.append(path)
    return sorted(found)


def remove_leftovers(root: Path | None = None) -> list[Path]:
    """Remove :func:`leftovers`; the folders removed."""
    gone = leftovers(root)
    for path in gone:
        shutil.rmtree(path, ignore_errors=True)
    return gone

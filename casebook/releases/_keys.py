"""What makes two runs' environments one warm server: the key of a process's server.

A server (:mod:`casebook.releases._server`) fixes at start-up what it imports: the
interpreter, what is installed in it, the environment, and casebook's own modules. A
process's runs that agree on all of these fork from one server; runs that differ in any
get servers of their own. The variables that differ
between the processes of one run without touching any import (pytest's and Jupyter's
own, colour and paging) are left out, and each run gets its kernel's whole environment
from its request anyway.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import site
import sys
from collections.abc import Mapping
from pathlib import Path

from casebook.project import PACKAGE

PER_PROCESS = re.compile(
    r"^(JAX_ENABLE_X64|PYTEST_.*|JPY_.*|PYDEVD_.*|MPLBACKEND|CLICOLOR.*|FORCE_COLOR|PAGER"
    r"|GIT_PAGER|TERM|COLUMNS|LINES)$"
)
"""Variables that differ between the processes of one run (a test worker and its kernels:
pytest's and Jupyter's own, colour and paging) without touching what jax or a release
does; x64 is set per run."""

SERVER_IGNORES = re.compile(f"{PER_PROCESS.pattern}|^CASEBOOK_.*$")
"""Variables left out of a server's key: :data:`PER_PROCESS`, and casebook's own, which
the parent reads, never a server at start-up. Each run still sees them all: it gets its
kernel's whole environment."""


@functools.cache
def source_digest() -> str:
    """casebook's own source as a server would load it (names, sizes, mtimes): a server
    started before an edit must not serve the edited code."""
    h = hashlib.sha256()
    for path in sorted(PACKAGE.rglob("*.py")):
        st = path.stat()
        h.update(f"{path.relative_to(PACKAGE)} {st.st_size} {st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def installed_stamp(python: str) -> list[tuple[str, int]]:
    """The modification times of the interpreter's site-packages folders (its venv's, and
    this process's own when it is the same interpreter): installing, upgrading or
    removing a package adds or removes a ``.dist-info`` there, so a server started
    before ``pip install -U optax`` never serves the runs after it."""
    folders = set(Path(python).parent.parent.glob("lib/python3*/site-packages"))
    if python == sys.executable:
        folders.update(Path(p) for p in site.getsitepackages() if Path(p).is_dir())
    return [(str(f), f.stat().st_mtime_ns) for f in sorted(folders)]


def key_of(python: str, env: Mapping[str, str]) -> str:
    """The name of an environment's server (its socket's): a digest of the interpreter, what is
    installed in it (:func:`installed_stamp`), the environment less
    :data:`SERVER_IGNORES`, and casebook's source."""
    fixed = sorted((k, v) for k, v in env.items() if not SERVER_IGNORES.match(k))
    text = json.dumps([python, installed_stamp(python), fixed, source_digest()])
    return hashlib.sha256(text.encode()).hexdigest()[:16]

"""The unit tests' record: which tests passed on the checkout as it is now.

A page's record (:mod:`casebook.maintainer.tools.buildcache`) holds what one page read. A unit test
reads more than its imports show: pages, case folders, the lock, programs it starts in
other processes (kernels, chromium, release servers), which coverage-based selection
(pytest-testmon) cannot see, so it would keep a test whose input changed. A unit test's
record is therefore keyed by the whole checkout: a digest of every file that git does not
ignore (tracked or not), and of the stack (:func:`buildcache.stack`).

One narrowing, declared by the test module and enforced while it runs: a module that sets
``READS_PAGES = False`` reads no page's text (a notebook, its Markdown twin, a book page, a
handout or a page's translation, :func:`is_page_text`), so its tests are keyed by every
file but those pages' bytes (their names still count: a page added or removed changes the
key); one that sets it to a tuple of pages (``("book/lessons.ipynb",)``) reads those
alone, and their bytes count too. Editing one case page (``sync`` rewrites its catalog
too) then re-runs the page and the tests that read it, not the release runner's tests.
The test command's ``conftest.py`` refuses, inside such a module's tests, any opening of
another page's text (a Python audit hook), so a wrong declaration goes red rather than
stale.

A test that failed, or was skipped, is never taken from the record; ``--fresh`` and
``CI=true`` ignore it (:func:`buildcache.fresh`).

Standard library only.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import json
import shutil
import subprocess
from pathlib import Path, PurePosixPath

from casebook.maintainer.tools import buildcache

RECORD = ".casebook-tests.json"
"""``{"passed": {node id: [kind, digest, date]}}``, under ``_build``."""

EVERYTHING = "everything"
"""The key of a test that may read any file of the checkout."""
NOT_PAGES = "all but the pages' text"
"""The key of a test whose module declares ``READS_PAGES = False``."""
AND = " and "
"""``NOT_PAGES + AND + "book/lessons.ipynb"``: the key of a test whose module declares the
pages it reads."""

PAGE_FOLDERS = ("notebooks", "book", "handouts")


def is_page_text(name: str) -> bool:
    """Whether the checkout's relative path ``name`` is a page's text: a notebook or
    Markdown file under ``notebooks/``, ``book/`` or ``handouts/``, or a page's translation
    (a catalog under ``locale/``, which ``sync`` rewrites when the page's words change).

    >>> is_page_text("notebooks/01-a.ipynb"), is_page_text("book/_ext/casebook_meta.py")
    (True, False)
    >>> is_page_text("locale/zh_CN/LC_MESSAGES/notebooks/01-a.po")
    True
    """
    path = PurePosixPath(name)
    if path.parts[:1] == ("locale",):
        return path.suffix == ".po"
    return path.parts[:1] in [(f,) for f in PAGE_FOLDERS] and path.suffix in {".ipynb", ".md"}


def kind_of(module: object) -> str:
    """The key a test module's tests are recorded under (its ``READS_PAGES``)."""
    reads = getattr(module, "READS_PAGES", True)
    if reads is True:
        return EVERYTHING
    return AND.join([NOT_PAGES, *sorted(reads or ())])


def pages_allowed(kind: str) -> frozenset[str] | None:
    """The pages a test of ``kind`` may open (None: any)."""
    return None if kind == EVERYTHING else frozenset(kind.split(AND)[1:])


def _digest(root: Path, kind: str) -> str | None:
    """The checkout's digest under ``kind``: :func:`checkout_digests`'s, and for a module's
    own pages, :data:`NOT_PAGES`'s with those pages' bytes (None outside a git checkout)."""
    digests = checkout_digests(root)
    if digests is None or kind in digests:
        return None if digests is None else digests[kind]
    digest = hashlib.sha256(digests[NOT_PAGES].encode())
    for name in sorted(pages_allowed(kind) or ()):
        path = root / name
        digest.update(name.encode() + b"\0" + (path.read_bytes() if path.is_file() else b""))
    return digest.hexdigest()


@functools.cache
def checkout_digests(root: Path) -> dict[str, str] | None:
    """Both keys of the checkout as it is now: a sha256 over the stack and the path and
    bytes of every file git does not ignore (:data:`EVERYTHING`), and the same with the
    pages' text reduced to their paths (:data:`NOT_PAGES`); None outside a git checkout
    (then nothing is recorded)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        capture_output=True,
    )
    if listed.returncode:
        return None
    stack = buildcache.stack().encode() + b"\0"
    every, not_pages = hashlib.sha256(stack), hashlib.sha256(stack)
    for name in sorted(set(listed.stdout.decode().split("\0")) - {""}):
        path = root / name
        if path.is_file():
            text = name.encode() + b"\0" + path.read_bytes() + b"\0"
            every.update(text)
            not_pages.update(name.encode() + b"\0" if is_page_text(name) else text)
    return {EVERYTHING: every.hexdigest(), NOT_PAGES: not_pages.hexdigest()}


def _read(build: Path) -> dict[str, list[str]]:
    """The record's entries; none from a record of another format (an older checkout's)."""
    path = build / RECORD
    passed = json.loads(path.read_text()).get("passed", {}) if path.exists() else {}
    return passed if isinstance(passed, dict) else {}


def _current(root: Path, build: Path) -> dict[str, list[str]]:
    held = _read(build).items()
    return {n: e for n, e in held if e[1] is not None and _digest(root, e[0]) == e[1]}


def passed_on_record(root: Path, build: Path | None = None) -> dict[str, tuple[str, str]]:
    """The node ids the record holds as passed on the checkout as it is now, each with the
    key it was recorded under and the record's date (empty under :func:`fresh`)."""
    if buildcache.fresh():
        return {}
    held = _current(root, build or root / "_build")
    return {nodeid: (kind, date) for nodeid, (kind, _, date) in held.items()}


def record(root: Path, passed: dict[str, str], failed: set[str], build: Path | None = None) -> None:
    """Add a run's ``passed`` tests (node id: the key its module is recorded under) to the
    record of today's checkout, less its ``failed`` ones; entries of other inputs go."""
    build = build or root / "_build"
    if checkout_digests(root) is None:
        return
    held = _current(root, build)
    now = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    for nodeid, kind in passed.items():
        digest = _digest(root, kind)
        if held.get(nodeid, [None])[0] != kind and digest is not None:
            held[nodeid] = [kind, digest, now]
    for nodeid in failed:
        held.pop(nodeid, None)
    build.mkdir(parents=True, exist_ok=True)
    (build / RECORD).write_text(json.dumps({"passed": held}, indent=1, sort_keys=True) + "\n")


def kept_folder(root: Path, folder: Path) -> Path:
    """``folder`` (a site the tests build, kept between test runs so that Sphinx reads
    again only the pages whose files changed), emptied first unless it was built on the
    checkout as it is now but for the pages' text (the :data:`NOT_PAGES` key: the config,
    the Sphinx extensions, casebook's sources, the stack; Sphinx would not see an edit to
    an extension). Always emptied under :func:`buildcache.fresh` and outside a git
    checkout. :func:`keep` records it, once built."""
    stamp = folder.with_name(folder.name + ".key")
    key = None if buildcache.fresh() else (checkout_digests(root) or {}).get(NOT_PAGES)
    if key is None or not stamp.exists() or stamp.read_text() != key:
        shutil.rmtree(folder, ignore_errors=True)
    stamp.unlink(missing_ok=True)  # a build that fails leaves it unrecorded
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def keep(root: Path, folder: Path) -> None:
    """Record ``folder``, just built, under the checkout's :data:`NOT_PAGES` key (a fresh
    run's build too: it is what a later run may start from)."""
    key = (checkout_digests(root) or {}).get(NOT_PAGES)
    if key is not None:
        folder.with_name(folder.name + ".key").write_text(key)

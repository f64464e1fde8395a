"""Fixtures shared by the unit tests: a fake IPython shell, and the book's two sites."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from casebook.maintainer.tools import testrecord

ROOT = Path(__file__).resolve().parent.parent


class FakeShell:
    """The two methods of IPython's shell that ``%load_ext casebook.explain`` uses: the
    hook it registers (``set_custom_exc``), and the traceback it shows (recorded in
    ``shown``), so a test can raise through the hook without an IPython kernel."""

    def __init__(self) -> None:
        self.shown: list[tuple] = []

    def set_custom_exc(self, types, handler) -> None:
        self.handler = handler

    def showtraceback(self, exc_tuple, tb_offset=None) -> None:
        self.shown.append(exc_tuple)


@pytest.fixture
def shell() -> FakeShell:
    """A fresh :class:`FakeShell`."""
    return FakeShell()


# ---------------------------------------------------------------- the sites, built once

SITE_INPUTS = ("_config.yml", "_toc.yml", "notebooks", "book", "casebook/cases")
"""What the site is built from; a built ``_build/html`` newer than all of them is reused."""


def _newest(paths: list[Path]) -> float:
    return max(p.stat().st_mtime for root in paths for p in [root, *root.rglob("*")] if p.is_file())


def _built_and_fresh(site: Path, inputs: tuple[str, ...]) -> bool:
    """Whether ``site`` (a book build's) is newer than every input."""
    search = site / "search.html"
    return search.exists() and search.stat().st_mtime > _newest([ROOT / p for p in inputs])


KEPT_SITES = ROOT / "_build" / "test-sites"
"""Where the sites the tests build are kept between test runs
(:func:`casebook.maintainer.tools.testrecord.kept_folder`): one page edited, Sphinx reads
only it again (the English site in 9 s, not 24; the zh site in 8 s, not 53)."""


def _once(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], Path]) -> Path:
    """``build(folder)`` in the site's kept folder (:data:`KEPT_SITES`), done once per
    test run whichever worker asks first: the others wait on a lock in the run's temporary
    root (which pytest-xdist's workers share), then take what it built. A failed build
    leaves no record, so the next to ask builds again."""
    base = factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    done = root / f"site-{name}.done"
    with open(root / f"site-{name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            folder = testrecord.kept_folder(ROOT, KEPT_SITES / name)
            built = build(folder)
            testrecord.keep(ROOT, folder)
            done.write_text(str(built))
        return Path(done.read_text())


def _english(out: Path) -> Path:
    """The book's HTML, its pages not executed, in ``out``: its sources copied with their
    modification times (so Sphinx's own ``_build`` there, kept, reads only what changed)."""
    src = out / "src"
    for old in src.glob("*") if src.exists() else ():
        if old.name != "_build":
            shutil.rmtree(old) if old.is_dir() else old.unlink()
    src.mkdir(parents=True, exist_ok=True)
    for name in SITE_INPUTS[:2]:
        shutil.copy(ROOT / name, src / name)
    skip = shutil.ignore_patterns("*.md", "measurements")
    shutil.copytree(ROOT / "notebooks", src / "notebooks", ignore=skip)
    shutil.copytree(
        ROOT / "book",
        src / "book",
        ignore=shutil.ignore_patterns(
            "measurements", "lessons.md", "status.md", "check-findings.md"
        ),
    )
    config = (src / "_config.yml").read_text()
    # Not executed, and no social cards: an image a shared link shows, not the page.
    for published, here in (
        ("execute_notebooks: cache", 'execute_notebooks: "off"'),
        ("ogp_social_cards: {enable: true}", "ogp_social_cards: {enable: false}"),
    ):
        assert published in config, published
        config = config.replace(published, here)
    (src / "_config.yml").write_text(config)
    jb = Path(sys.executable).parent / "jupyter-book"
    proc = subprocess.run(
        [str(jb), "build", str(src), "--builder", "html"], capture_output=True, text=True
    )
    site = src / "_build" / "html"
    assert (site / "search.html").exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    return site


def _chinese(out: Path) -> Path:
    """The zh_CN site, its pages not executed, in ``out``, built in a process of its own
    (as the book builds it: Sphinx keeps a process's catalogs)."""
    command = ["-m", "casebook.maintainer.tools.i18n", "html", "--out", str(out), "--not-executed"]
    subprocess.run([sys.executable, *command], check=True, capture_output=True)
    return out / "zh_CN"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The English site: ``_build/html`` when it is newer than every input, else the pages
    built, not executed, once per test run (the browser and translation tests share it)."""
    built = ROOT / "_build" / "html"
    if _built_and_fresh(built, SITE_INPUTS):
        return built
    return _once(tmp_path_factory, "en", _english)


@pytest.fixture(scope="module")
def zh_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The zh_CN site: ``_build/html/zh_CN`` when it is newer than every input and the
    catalogs, else the pages built, not executed, once per test run."""
    built = ROOT / "_build" / "html" / "zh_CN"
    if _built_and_fresh(built, (*SITE_INPUTS, "locale")):
        return built
    return _once(tmp_path_factory, "zh", _chinese)

"""A lock bump edits no page: pages compare today's versions with the lock's own pins.

The kernel runs the lock (``requirements.txt``). Where a page says which releases "today"
means, it compares what it ran on with the lock's pins, ``stack.ran_on().locked`` (read by
:func:`casebook.lock.locked_versions`), and never with a version written in the page. So the
day the lock moves (jax 0.12 to 0.13, say), no page needs an edit. This file checks both
halves: no page's code, nor a script or module of a case folder (which pages run), writes a
version of the lock's packages at its pin; and with pins bumped in a copy of the lock, the
helper reads the new pins, which are what the pages compare with.

A release spec the manifest pins by sha256 (``"optax==0.2.8"``, the copy a page patches) is
a named release, not today's: the manifest does not move with the lock, so it stays.
"""

from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from pathlib import Path

import pytest

from casebook import lock, releases
from casebook.project import REPORTED, ROOT
from casebook.status import stack

PAGES = sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted((ROOT / "book").glob("*.ipynb"))
CASE_CODE = sorted((ROOT / "casebook" / "cases").glob("*/scripts/*.py")) + sorted(
    (ROOT / "casebook" / "cases").glob("*/*.py")
)

#: The names a page's code gives the packages (``eqx.__version__`` is equinox's).
ALIASES = {"equinox": ("equinox", "eqx"), "numpy": ("numpy", "np")}

_VERSION = re.compile(r"v?(\d+(?:\.\d+)+)\.?")
_SPEC = re.compile(r"([A-Za-z0-9_.-]+)==(\d+(?:\.\d+)+)")


def _named(package: str) -> re.Pattern[str]:
    names = "|".join(ALIASES.get(package, (package,)))
    return re.compile(rf"(?<![\w.])(?:{names})(?![\w-])")


def _in_text(package: str) -> re.Pattern[str]:
    """``jax 0.12`` or ``optax==0.2.8`` in a comment or a string of words."""
    names = "|".join(ALIASES.get(package, (package,)))
    return re.compile(rf"(?<![\w.])(?:{names})(?: |==)v?(\d+(?:\.\d+)+)")


def is_pin(version: str, pin: str) -> bool:
    """Whether ``version`` names the pin: the pin itself or its first parts (``"0.12"`` of
    ``"0.12.0.1"``), at least two of them."""
    parts = version.rstrip(".").split(".")
    return len(parts) >= 2 and pin.split(".")[: len(parts)] == parts


def pinned_literals(
    code: str, pins: dict[str, str], manifest: set[str], *, words: bool = True
) -> list[str]:
    """The places ``code`` writes a version of a package of ``pins`` at its pin: a string
    that is the version, on a line that names the package (``jax.__version__.startswith(
    "0.12")``, ``versions={"equinox": "0.13.8"}``); a spec ``"optax==0.2.8"`` the manifest
    lacks; and, with ``words``, ``optax 0.2.8`` in a comment or in a string of words."""
    lines = code.splitlines()
    found = []
    for node in ast.walk(ast.parse(code)):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            continue
        text = node.value.strip()
        where = "\n".join(lines[node.lineno - 1 : node.end_lineno])
        spec = _SPEC.fullmatch(text)
        version = _VERSION.fullmatch(text)
        for package, pin in pins.items():
            if spec:
                hit = spec[1].lower() == package and is_pin(spec[2], pin) and text not in manifest
            elif version:
                hit = is_pin(version[1], pin) and bool(_named(package).search(where))
            else:
                hit = words and any(is_pin(v, pin) for v in _in_text(package).findall(text))
            if hit:
                found.append(f"line {node.lineno}: {where.strip()}")
    if words:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type == tokenize.COMMENT and any(
                is_pin(v, pins[p]) for p in pins for v in _in_text(p).findall(token.string)
            ):
                found.append(f"line {token.start[0]}: {token.line.strip()}")
    return sorted(set(found))


def code_cells(page: Path) -> list[tuple[int, str]]:
    """``(index, Python)`` of a page's code cells: magic and shell lines blanked, the body
    of a ``%%`` cell kept (an ``%%on_release`` body is code the page runs)."""
    found = []
    for i, cell in enumerate(json.loads(page.read_text())["cells"]):
        if cell["cell_type"] == "code":
            lines = "".join(cell["source"]).splitlines()
            found.append((i, "\n".join("" if re.match(r"\s*[%!]", x) else x for x in lines)))
    return found


def literals_in_the_book(pins: dict[str, str]) -> list[str]:
    """Every place a page, a case's script or a case's module writes a pin of ``pins``."""
    manifest = set(releases.load_manifest())
    found = []
    for page in PAGES:
        for i, code in code_cells(page):
            for hit in pinned_literals(code, pins, manifest):
                found.append(f"{page.relative_to(ROOT)}, cell {i}, {hit}")
    for path in CASE_CODE:  # their docstrings may state the facts of a release: strings only
        for hit in pinned_literals(path.read_text(), pins, manifest, words=False):
            found.append(f"{path.relative_to(ROOT)}, {hit}")
    return found


def bump(version: str, part: int) -> str:
    """``version`` with its part ``part`` raised by one and the parts after it dropped:
    ``bump("0.12.0.1", 1) == "0.13.0"``, ``bump("0.2.8", 2) == "0.2.9"``."""
    parts = [int(p) for p in version.split(".")][: part + 1]
    parts[part] += 1
    return ".".join(map(str, (parts + [0, 0])[: max(3, part + 1)]))


@pytest.fixture
def bumped(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A copy of the lock with jax and jaxlib one minor release on, and optax one patch on
    (jax 0.12.0.1 becomes 0.13.0, optax 0.2.8 becomes 0.2.9); the new pins."""
    text = lock.REQUIREMENTS.read_text()
    was = lock.locked_versions(("jax", "jaxlib", "optax"))
    new = {name: bump(v, 2 if name == "optax" else 1) for name, v in was.items()}
    for name, version in new.items():
        pin = rf"^{name}=={re.escape(was[name])}(?=[\s;\\])"
        text, count = re.subn(pin, f"{name}=={version}", text, flags=re.MULTILINE)
        assert count == 1, (name, count)
    copy = tmp_path / "requirements.txt"
    copy.write_text(text)
    return copy, new


def test_no_page_writes_a_version_of_the_lock():
    pins = lock.locked_versions(REPORTED)
    assert {"jax", "optax", "equinox"} <= set(pins), pins
    found = literals_in_the_book(pins)
    assert not found, (
        "a page writes a version the lock pins, so moving the lock would need an edit; compare "
        "with stack.ran_on().locked (the lock's pins) instead:\n  " + "\n  ".join(found)
    )


def test_the_helper_reads_the_bumped_lock(bumped, monkeypatch):
    copy, new = bumped
    was = lock.locked_versions(tuple(new))
    assert lock.locked_versions(tuple(new), path=copy) == new
    assert all(new[n] != was[n] for n in new), (was, new)
    # The other pins are the lock's.
    kept = lock.locked_versions(("equinox", "diffrax", "numpy"))
    assert lock.locked_versions(tuple(kept), path=copy) == kept
    # What pages compare with, stack.ran_on().locked, follows the lock: on this kernel, which
    # runs the old pins, the page's lock-only assertions are skipped, and it says why.
    monkeypatch.setattr(lock, "REQUIREMENTS", copy)
    ran = stack.ran_on()
    assert {n: ran.locked[n] for n in new} == new
    assert not ran.on_lock and ran.off_lock["jax"] == (ran.versions["jax"], new["jax"])
    assert f"(locked {new['jax']})" in str(ran)
    # A kernel that runs the bumped lock is on it, and the pages' comparison holds there.
    moved = stack.Stack(ran.python, {**ran.versions, **new}, ran.device, locked=ran.locked)
    assert moved.on_lock
    assert (moved.versions["jax"], moved.versions["optax"]) == (
        moved.locked["jax"],
        moved.locked["optax"],
    )
    # And no page writes the pins that moved, old or new.
    assert not literals_in_the_book(was) and not literals_in_the_book(new)


@pytest.mark.parametrize(
    "line",
    [
        'assert jax.__version__.startswith("0.12") and optax.__version__ == "0.2.8"',
        'assert (wrong.version("jax") + ".").startswith("0.12."), wrong.versions',
        'releases.expect(repro, versions={"optax": "0.2.4", "equinox": "0.13.8"})',
        'assert eqx.__version__ == "0.13.8"',
        'releases.run(code, "optax==0.2.8")',
        "x = 1  # the card names today's releases (jax 0.12, optax 0.2.8)",
        'print("Today\'s releases (jax 0.12, optax 0.2.8) print:")',
    ],
)
def test_the_scan_finds_a_pinned_version(line):
    pins = {"jax": "0.12.0.1", "optax": "0.2.8", "equinox": "0.13.8"}
    assert pinned_literals(line, pins, manifest=set())


@pytest.mark.parametrize(
    "line",
    [
        'fix = releases.patched("optax==0.2.8", patch, name="fix C")',  # a manifest release
        'assert repro.version("optax") == "0.1.9"',  # a historical release
        "opt = optax.sgd(0.12)",  # a number, not a version
        'assert kernel.versions["jax"] == kernel.locked["jax"]',
    ],
)
def test_the_scan_keeps_named_releases(line):
    pins = {"jax": "0.12.0.1", "optax": "0.2.8", "equinox": "0.13.8"}
    assert not pinned_literals(line, pins, manifest={"optax==0.2.8"})

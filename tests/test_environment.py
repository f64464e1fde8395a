"""The environment the tests run in is the lock, and each page states what it ran on."""

from __future__ import annotations

import importlib.metadata as md
import sys
from pathlib import Path

import pytest
from packaging.markers import Marker

from casebook import lock, releases
from casebook.status import stack

READS_PAGES = False


def test_every_locked_package_for_this_platform_is_installed_at_its_pin():
    if not releases.running_from_checkout():
        pytest.skip("casebook is installed as a package: no lock to compare with")
    wrong = []
    for name, version, marker in lock.locked_pins():
        if marker and not Marker(marker).evaluate():
            continue
        try:
            got = md.version(name)
        except md.PackageNotFoundError:
            got = "missing"
        if got != version:
            wrong.append(f"{name}: {got}, locked {version}")
    assert not wrong, (
        "the environment differs from requirements.txt; run "
        "`python3 -m casebook setup`:\n  " + "\n  ".join(wrong)
    )


def test_the_set_up_installs_the_lock_compiled():
    """Every kernel, server and test worker imports the stack afresh: from bytecode the set-up
    wrote, not from sources compiled again in each process."""
    if not releases.running_from_checkout():
        pytest.skip("casebook is installed as a package: the set-up did not make this venv")
    import importlib.util

    import jax  # noqa: F401  (what the check reads: jax's modules and numpy's)

    modules = [m for m in sys.modules.values() if getattr(m, "__file__", "") or ""]
    stack_modules = [m for m in modules if m.__name__.split(".")[0] in ("jax", "numpy")]
    uncompiled = [
        m.__name__
        for m in stack_modules
        if m.__file__.endswith(".py")
        and not Path(importlib.util.cache_from_source(m.__file__)).exists()
    ]
    assert len(stack_modules) > 100, [m.__name__ for m in stack_modules]  # jax is imported
    assert not uncompiled, (
        f"{len(uncompiled)} modules have no bytecode (e.g. {uncompiled[:3]}); run "
        "`python3 -m casebook setup`"
    )


def test_ran_on_reports_versions_and_the_lock():
    ran = stack.ran_on()
    assert ran.versions["jax"] == md.version("jax")
    assert ran.locked and not ran.off_lock
    assert str(ran).startswith("Ran on Python ") and "locked 20" in str(ran)


def test_a_stack_off_the_lock_says_so():
    ran = stack.Stack(
        "3.13.0",
        {"jax": "0.11.2", "optax": "0.2.8"},
        "gpu: H100",
        locked={"jax": "0.12.0.1", "optax": "0.2.8"},
        locked_on="2026-11-22",
    )
    assert ran.off_lock == {"jax": ("0.11.2", "0.12.0.1")}
    assert "Differs from the lock: jax 0.11.2 (locked 0.12.0.1)" in str(ran)
    assert "casebook-stack" in ran._repr_html_()


def test_installed_casebook_uses_the_per_user_cache(monkeypatch, tmp_path):
    monkeypatch.delenv("CASEBOOK_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert releases.cache_dir() == releases.REPO_ROOT / ".casebook-cache"
    # the cache functions live in casebook.releases._envs and read its REPO_ROOT
    monkeypatch.setattr(releases._envs, "REPO_ROOT", tmp_path / "site-packages")
    assert not releases.running_from_checkout()
    if sys.platform.startswith("linux"):
        assert releases.cache_dir() == tmp_path / "casebook"
    monkeypatch.setenv("CASEBOOK_CACHE", str(tmp_path / "mine"))
    assert releases.cache_dir() == tmp_path / "mine"

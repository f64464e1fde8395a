"""Era stacks (casebook.releases.eras): the real manifest's eras, and a synthetic era built
and run without network: a venv of this Python holding one tiny wheel (``fakepkg``) from
a local directory, pinned by its sha256 in the era's lock.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_releases import _wheel

from casebook import cases, releases as r
from casebook.releases import eras

THIS_PYTHON = f"{sys.version_info[0]}.{sys.version_info[1]}"


def test_the_real_eras_are_pinned_and_dated() -> None:
    known = eras.load_eras()
    # an era is a case folder with a lock (a new case's era joins with no list to edit)
    locked = {c.key for c in cases.CASES if (c.folder / eras.LOCK_FILE).exists()}
    assert set(known) == locked
    assert {"optax-828", "optax-1373", "optax-1017", "optax-1210", "diffrax-521"} <= locked
    for era in known.values():
        text = era.lock.read_text()
        assert era.issue.endswith(era.name.split("-")[1]) and era.python == "3.12"
        assert f"--exclude-newer {era.reported}T23:59:59Z" in text  # how it was resolved
        for package, version in era.packages.items():
            assert f"\n{package}=={version} \\" in text, (era.name, package)
        pins = re.findall(r"^\S+==\S+ \\$", text, re.M)
        hashed = re.findall(r"^\S+==\S+ \\\n    --hash=sha256:[0-9a-f]{64}", text, re.M)
        assert pins and len(hashed) == len(pins), era.name  # every pin has its hashes


def _era(tmp_path: Path, *, good_hash: bool = True, python: str = THIS_PYTHON) -> eras.Era:
    index = tmp_path / "index"
    index.mkdir(exist_ok=True)
    wheel = _wheel(index, "3.0", "def era():\n    return 'the day of the report'\n")
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest() if good_hash else "0" * 64
    lock = tmp_path / "fake.txt"
    lock.write_text(
        f"--no-index\n--find-links {index}\nfakepkg==3.0 \\\n    --hash=sha256:{digest}\n"
    )
    return eras.Era("fake", "2024-01-01", "https://example.org/1", python, lock, {"fakepkg": "3.0"})


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("CASEBOOK_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_an_era_is_built_once_and_runs_in_its_own_venv(tmp_path, cache, monkeypatch) -> None:
    era = _era(tmp_path)
    python = eras.ensure(era, log=lambda _: None)
    assert python == cache / "eras" / "fake" / "bin" / "python"
    assert eras.ensure(era, log=pytest.fail) == python  # built: no second build
    monkeypatch.setattr(eras, "load_eras", lambda path=None: {"fake": era})
    out = r.expect(r.run("import fakepkg\nresult = [fakepkg.era(), fakepkg.__file__]", "era:fake"))
    assert out.result[0] == "the day of the report"
    assert out.result[1].startswith(str(cache / "eras" / "fake"))


def test_an_era_run_sees_nothing_of_todays_stack(tmp_path, cache, monkeypatch) -> None:
    era = _era(tmp_path)
    monkeypatch.setattr(eras, "load_eras", lambda path=None: {"fake": era})
    out = r.run("import importlib.util as u\nresult = u.find_spec('jax') is None", "era:fake")
    assert out.result is True


def test_an_unknown_era_names_the_known_ones() -> None:
    with pytest.raises(r.UnknownEra, match=r"'era:optax-9999' is not an era.*era:optax-828"):
        r.run("pass", "era:optax-9999")


def test_a_hash_mismatch_installs_nothing_and_a_retry_is_clean(tmp_path, cache) -> None:
    with pytest.raises(r.HashMismatch, match="does not match the sha256 of fake.txt"):
        eras.ensure(_era(tmp_path, good_hash=False), log=lambda _: None)
    left = sorted(p.name for p in (cache / "eras").iterdir()) if (cache / "eras").exists() else []
    assert left in ([], ["fake.failed"])  # no venv, at most the record of the failure
    assert eras.ensure(_era(tmp_path), log=lambda _: None).exists()  # another lock: built


def test_no_suitable_python_names_the_one_to_install(tmp_path, cache, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "no-pyenv"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(eras, "uv", lambda: None)
    with pytest.raises(r.EraPythonMissing, match=r"need Python 3\.12.*pyenv install 3\.12"):
        eras.ensure(_era(tmp_path, python="3.12"), log=lambda _: None)
    assert not (cache / "eras").exists()


def test_a_stale_era_is_rebuilt_once_then_refused_with_the_fix(
    tmp_path, cache, monkeypatch
) -> None:
    """A changed lock makes the venv stale: it is rebuilt once; when that fails, later runs
    refuse at once (no download, no build) and name the command that tries again."""
    good = _era(tmp_path)
    eras.ensure(good, log=lambda _: None)
    bad = _era(tmp_path, good_hash=False)  # the same era, its lock changed (and broken)
    with pytest.raises(r.HashMismatch):
        eras.ensure(bad, log=lambda _: None)
    monkeypatch.setattr(eras, "_build", lambda *a: pytest.fail("built again"))
    for _ in range(2):
        with pytest.raises(
            r.EraBuildFailed, match=r"(?s)was not tried again.*python3 -m casebook fetch"
        ):
            eras.ensure(bad, log=lambda _: None)
    monkeypatch.undo()
    monkeypatch.setenv("CASEBOOK_CACHE", str(cache))
    with pytest.raises(r.HashMismatch):  # the set-up (retry=True) tries once more
        eras.ensure(bad, log=lambda _: None, retry=True)


def test_an_interrupted_build_leaves_nothing_and_a_rerun_is_clean(
    tmp_path, cache, monkeypatch
) -> None:
    """Ctrl-C in the middle of a build: no venv, no scratch, no failure record; the next
    call builds it. A scratch directory left by a killed process is swept."""
    era = _era(tmp_path)
    real_build = eras._build

    def interrupted(era_, base, venv):
        venv.mkdir(parents=True)
        (venv / "half").write_text("")
        raise KeyboardInterrupt

    monkeypatch.setattr(eras, "_build", interrupted)
    with pytest.raises(KeyboardInterrupt):
        eras.ensure(era, log=lambda _: None)
    assert not (cache / "eras").exists() or not any((cache / "eras").iterdir())
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    leftover = cache / "eras" / f"fake.partial-{dead.stdout.strip()}"
    leftover.mkdir(parents=True)
    monkeypatch.setattr(eras, "_build", real_build)
    assert eras.ensure(era, log=lambda _: None).exists()
    assert sorted(p.name for p in (cache / "eras").iterdir()) == ["fake"]

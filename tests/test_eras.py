"""Era stacks (casebook.releases.eras) and the environments every target is built as
(casebook.releases._envs): the real manifest's eras, and a synthetic era built and run
without network: a venv of this Python holding one tiny wheel (``fakepkg``) from a local
directory, pinned by its sha256 in the era's lock, installed by uv as everywhere.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from test_releases import _wheel

from casebook import cases, releases as r
from casebook.releases import _envs, eras, erasize

READS_PAGES = False

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
        assert {"jax", "jaxlib"} <= set(era.packages), era.name  # read from the lock
        pins = re.findall(r"^\S+==\S+ \\$", text, re.M)
        hashed = re.findall(r"^\S+==\S+ \\\n    --hash=sha256:[0-9a-f]{64}", text, re.M)
        assert pins and len(hashed) == len(pins), era.name  # every pin has its hashes
        # the recorded download is this lock's: one wheel per pin (erasize checked each
        # wheel's hash against the lock when it measured them); a jaxlib alone is > 50 MB
        assert len(erasize.pins(text)) == len(pins) == era.download_wheels, era.name
        assert 50e6 < era.download_bytes < 500e6, era.name


def _era(
    tmp_path: Path, *, good_hash: bool = True, python: str = THIS_PYTHON, index: str = "--no-index"
) -> eras.Era:
    """The synthetic era; ``index=""`` lets uv look beyond the local directory (PyPI,
    where it may download; offline, only its cache)."""
    wheels = tmp_path / "index"
    wheels.mkdir(exist_ok=True)
    wheel = _wheel(wheels, "3.0", "def era():\n    return 'the day of the report'\n")
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest() if good_hash else "0" * 64
    lock = tmp_path / "fake.txt"
    links = wheels if index else tmp_path / "nothing-here"
    links.mkdir(exist_ok=True)
    lock.write_text(f"{index}\n--find-links {links}\nfakepkg==3.0 \\\n    --hash=sha256:{digest}\n")
    return eras.Era(
        "fake",
        "2024-01-01",
        "https://example.org/1",
        python,
        lock,
        {"fakepkg": "3.0"},
        1,
        2_400_000,
    )


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("CASEBOOK_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def ensure(era: eras.Era, **kwargs) -> Path:
    """Build the era's environment as a run does (:func:`casebook.releases._envs.ensure`)."""
    return _envs.ensure(eras.environment(era), **kwargs)


def _left(cache: Path) -> list[str]:
    return sorted(p.name for p in (cache / "envs").iterdir()) if (cache / "envs").exists() else []


def test_an_era_is_built_once_and_runs_in_its_own_venv(tmp_path, cache, monkeypatch) -> None:
    era = _era(tmp_path)
    python = ensure(era, log=lambda _: None)
    key = eras.environment(era).key
    assert python == cache / "envs" / f"era-fake-{key}" / "bin" / "python"
    assert ensure(era, log=pytest.fail) == python  # built: no second build
    monkeypatch.setattr(eras, "load_eras", lambda path=None: {"fake": era})
    out = r.expect(r.run("import fakepkg\nresult = [fakepkg.era(), fakepkg.__file__]", "era:fake"))
    assert out.result[0] == "the day of the report"
    assert out.result[1].startswith(str(cache / "envs" / f"era-fake-{key}"))


def test_an_era_run_sees_nothing_of_todays_stack(tmp_path, cache, monkeypatch) -> None:
    era = _era(tmp_path)
    monkeypatch.setattr(eras, "load_eras", lambda path=None: {"fake": era})
    monkeypatch.setenv("JAX_COMPILATION_CACHE_DIR", str(tmp_path / "xla"))  # a reader's
    code = (
        "import importlib.util as u, os\n"
        "result = [u.find_spec('jax'), os.environ.get('JAX_COMPILATION_CACHE_DIR')]"
    )
    assert r.run(code, "era:fake").result == [None, None]


def test_an_unknown_era_names_the_known_ones() -> None:
    with pytest.raises(r.UnknownEra, match=r"'era:optax-9999' is not an era.*era:optax-828"):
        r.run("pass", "era:optax-9999")


def test_a_hash_mismatch_installs_nothing_and_a_retry_is_clean(tmp_path, cache) -> None:
    bad = _era(tmp_path, good_hash=False)
    with pytest.raises(r.HashMismatch, match="does not match the sha256 of fake.txt"):
        ensure(bad, log=lambda _: None)
    failed = f"era-fake-{eras.environment(bad).key}.failed"
    assert _left(cache) in ([], [failed])  # no venv, at most the record of the failure
    assert ensure(_era(tmp_path), log=lambda _: None).exists()  # another lock: built


def test_no_suitable_python_names_the_one_to_install(tmp_path, cache, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "no-pyenv"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(_envs, "uv", lambda: None)
    monkeypatch.setattr(_envs.sys, "base_prefix", str(tmp_path / "no-python"))
    with pytest.raises(r.EraPythonMissing, match=r"needs Python 3\.12.*pyenv install 3\.12"):
        ensure(_era(tmp_path, python="3.12"), log=lambda _: None)
    assert not (cache / "envs").exists()


def test_a_stale_era_is_rebuilt_once_then_refused_with_the_fix(
    tmp_path, cache, monkeypatch
) -> None:
    """A changed lock is another environment: it is built once; when that fails, later runs
    refuse at once (no download, no build) and name the command that tries again."""
    good = _era(tmp_path)
    ensure(good, log=lambda _: None)
    bad = _era(tmp_path, good_hash=False)  # the same era, its lock changed (and broken)
    with pytest.raises(r.HashMismatch):
        ensure(bad, log=lambda _: None)
    monkeypatch.setattr(_envs, "_build", lambda *a: pytest.fail("built again"))
    for _ in range(2):
        with pytest.raises(
            r.EraBuildFailed, match=r"(?s)was not tried again.*python3 -m casebook setup"
        ):
            ensure(bad, log=lambda _: None)
    monkeypatch.undo()
    monkeypatch.setenv("CASEBOOK_CACHE", str(cache))
    with pytest.raises(r.HashMismatch):  # the set-up (retry=True) tries once more
        ensure(bad, log=lambda _: None, retry=True)


def test_an_interrupted_build_leaves_nothing_and_a_rerun_is_clean(
    tmp_path, cache, monkeypatch
) -> None:
    """Ctrl-C in the middle of a build: no venv, no scratch, no failure record; the next
    call builds it. A scratch directory left by a killed process is swept."""
    era = _era(tmp_path)
    real_build = _envs._build

    def interrupted(env, base, venv, say):
        venv.mkdir(parents=True)
        (venv / "half").write_text("")
        raise KeyboardInterrupt

    monkeypatch.setattr(_envs, "_build", interrupted)
    with pytest.raises(KeyboardInterrupt):
        ensure(era, log=lambda _: None)
    assert _left(cache) == []
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    venv = _envs.venv_dir(eras.environment(era))
    leftover = venv.with_name(f"{venv.name}.partial-{dead.stdout.strip()}")
    leftover.mkdir(parents=True)
    monkeypatch.setattr(_envs, "_build", real_build)
    assert ensure(era, log=lambda _: None).exists()
    assert _left(cache) == [venv.name]


def test_on_demand_the_size_comes_first_then_uv_s_own_lines(tmp_path, cache, monkeypatch) -> None:
    """On demand (a page in Colab), uv may download: the era's recorded size is printed
    before uv runs, and uv's lines follow as it prints them."""
    monkeypatch.setenv(_envs.ON_DEMAND_ENV, "1")
    said: list[str] = []
    ensure(_era(tmp_path), log=said.append)
    size = said.index(
        "casebook: era:fake: downloading about 2 MB (1 wheels; less where uv's cache holds "
        "some) ..."
    )
    uv_lines = [i for i, line in enumerate(said) if line.startswith("  uv: ")]
    assert uv_lines and size < uv_lines[0]
    assert "  uv:  + fakepkg==3.0" in said


def test_off_demand_a_missing_era_downloads_nothing_and_names_the_fix(
    tmp_path, cache, monkeypatch
) -> None:
    """Off demand (the test suite, a page in a clone), uv runs offline: an era whose wheels
    are not in uv's cache fails at once, naming the set-up step, every time (no failure
    record turns it into another error), and says nothing of a download."""
    monkeypatch.delenv(_envs.ON_DEMAND_ENV, raising=False)
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "empty-uv-cache"))
    # were uv to go online after all, the index it would reach is an empty folder
    monkeypatch.setenv("UV_DEFAULT_INDEX", (tmp_path / "no-index").as_uri())
    era = _era(tmp_path, index="")  # fakepkg is nowhere but on an index uv may not reach
    said: list[str] = []
    for _ in range(2):
        with pytest.raises(
            r.ReleaseNotCached, match=r"era:fake is not built.*`python3 -m casebook setup`"
        ):
            ensure(era, log=said.append)
    assert not any("downloading" in line or "uv:" in line for line in said)
    assert _left(cache) == []


_LOCK = """\
absl-py==2.1.0 \\
    --hash=sha256:{a} \\
    --hash=sha256:{b}
    # via chex
jaxlib==0.4.25 \\
    --hash=sha256:{c}
"""


def _pylock(*packages: tuple[str, str, str, int]) -> str:
    return "".join(
        f'[[packages]]\nname = "{name}"\nversion = "{version}"\n'
        f'wheels = [{{ url = "https://x/{name}.whl", size = {size}, '
        f'hashes = {{ sha256 = "{digest}" }} }}]\n'
        for name, version, digest, size in packages
    )


def test_a_recorded_size_sums_the_wheels_uv_picks_from_the_lock() -> None:
    """erasize counts and sums the one wheel per pin of uv's pylock.toml, and refuses one
    that is not the lock's (another version, a hash the lock does not name) or a pin left
    without a wheel: a size is recorded only for the lock it was measured on."""
    lock = _LOCK.format(a="a" * 64, b="b" * 64, c="c" * 64)
    good = [("absl-py", "2.1.0", "b" * 64, 1_000), ("jaxlib", "0.4.25", "c" * 64, 79_000_000)]
    assert erasize.measure(_pylock(*good), lock) == erasize.Download(2, 79_001_000)
    with pytest.raises(r.ReleaseError, match="jaxlib==0.4.25: not a pin of the lock"):
        erasize.measure(_pylock(good[0], ("jaxlib", "0.4.25", "d" * 64, 1)), lock)
    with pytest.raises(r.ReleaseError, match="jaxlib==0.4.26: not a pin of the lock"):
        erasize.measure(_pylock(good[0], ("jaxlib", "0.4.26", "c" * 64, 1)), lock)
    with pytest.raises(r.ReleaseError, match="the lock pins jaxlib, which uv does not"):
        erasize.measure(_pylock(good[0]), lock)


def test_a_recorded_size_goes_into_the_era_table(tmp_path) -> None:
    facts = tmp_path / "case.toml"
    facts.write_text('[issue]\nopened = "x"\n\n[era]\npython = "3.12"\n\n[case]\nnumber = 1\n')
    erasize.record(facts, erasize.Download(2, 5))
    erasize.record(facts, erasize.Download(3, 7))  # replaced, not added again
    era = tomllib.loads(facts.read_text())["era"]
    assert era == {"python": "3.12", "download": {"wheels": 3, "bytes": 7}}


def test_set_up_and_on_demand_run_one_uv_command_and_the_test_suite_its_offline_twin(
    tmp_path,
) -> None:
    env = eras.environment(_era(tmp_path))
    venv = tmp_path / "venv"
    online = _envs.install_command("uv", env, venv, online=True)
    offline = _envs.install_command("uv", env, venv, online=False)
    pins = ["--require-hashes", "--no-deps", "-r", str(venv / _envs.PINS)]
    assert online[:3] == ["uv", "pip", "install"] and online[-4:] == pins
    assert online[online.index("--python") + 1] == str(venv / "bin" / "python")
    assert [a for a in offline if a not in online] == ["--offline"]
    assert [a for a in online if a not in offline] == ["--system-certs"]
    unhashed = _envs.Env("x==1", "3.13", "x==1\n", "a set without hashes")
    assert "--require-hashes" not in _envs.install_command("uv", unhashed, venv, online=True)


@pytest.mark.parametrize("writes", [True, False], ids=["bytecode written", "no bytecode"])
def test_an_environment_is_compiled_when_built_only_where_its_runs_write_no_bytecode(
    tmp_path, cache, monkeypatch, writes
) -> None:
    """Colab writes bytecode: the first run compiles what it imports, not all of the
    environment; this machine sets ``PYTHONDONTWRITEBYTECODE``, so there it is compiled
    once, when it is built."""
    if writes:
        monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    else:
        monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    venv = ensure(_era(tmp_path), log=lambda _: None).parent.parent
    compiled = list(_envs.site_packages(venv).glob("fakepkg/__pycache__/*.pyc"))
    assert bool(compiled) is not writes

"""Unit tests of casebook.releases, on a synthetic package so they need no network.

A tiny wheel (``fakepkg``) is built in a temporary directory and handed to uv through
``UV_FIND_LINKS``, so the real paths all run: each release's environment is built by uv,
offline, from today's stack (in uv's cache since set-up) and the release's pin and hash,
and each run starts that environment's interpreter. The sections follow the subpackage's
modules: manifest and environments, runner (and its child program), patches, expect
(version tables), magic.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
import types
import zipfile
from pathlib import Path

import pytest

from casebook import releases as r, storage
from casebook.releases import (
    _child as child,
    _envs as envs,
    _pool as pool,
    _targets as targets,
)

READS_PAGES = False


def _wheel(dirpath: Path, version: str, body: str, requires: str = "") -> Path:
    path = dirpath / f"fakepkg-{version}-py3-none-any.whl"
    info = f"fakepkg-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: fakepkg\nVersion: {version}\n"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("fakepkg/__init__.py", f"__version__ = {version!r}\n" + textwrap.dedent(body))
        zf.writestr(f"{info}/METADATA", metadata + requires)
        zf.writestr(
            f"{info}/WHEEL",
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        zf.writestr(f"{info}/RECORD", "")
    return path


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """Two fake releases in a find-links dir, a manifest for them, and their environments."""
    root = tmp_path_factory.mktemp("releases")
    index = root / "index"
    index.mkdir()
    old = _wheel(
        index,
        "1.0",
        """
        def merge(flag, a, b):
            return (1 - flag) * a + flag * b      # the buggy blend
    """,
    )
    new = _wheel(
        index,
        "2.0",
        """
        def merge(flag, a, b):
            return b if flag else a               # the fixed select
    """,
        requires="Requires-Dist: etils\nRequires-Dist: sphinx ; extra == 'docs'\n",
    )
    manifest_text = "".join(
        f'[[release]]\npackage = "fakepkg"\nversion = "{v}"\n'
        f'sha256 = "{hashlib.sha256(w.read_bytes()).hexdigest()}"\n\n'
        for v, w in (("1.0", old), ("2.0", new))
    )
    manifest_path = root / "manifest.toml"
    manifest_path.write_text(manifest_text)
    cache = root / "cache"
    mp = pytest.MonkeyPatch()
    mp.setenv("CASEBOOK_CACHE", str(cache))
    mp.setenv("CASEBOOK_MANIFEST", str(manifest_path))
    mp.setenv("UV_FIND_LINKS", str(index))
    for spec in ("fakepkg==1.0", "fakepkg==2.0"):
        envs.ensure(targets.environment(spec), log=lambda _: None, online=False)
    yield {"root": root, "index": index, "cache": cache, "manifest": manifest_path}
    mp.undo()


@pytest.fixture
def env(world, monkeypatch):
    monkeypatch.setenv("CASEBOOK_CACHE", str(world["cache"]))
    monkeypatch.setenv("CASEBOOK_MANIFEST", str(world["manifest"]))
    monkeypatch.setenv("UV_FIND_LINKS", str(world["index"]))
    return world


# ----------------------------------------------------------- manifest and environments


def test_real_manifest_pins_every_release_by_sha256():
    manifest = r.load_manifest(r.MANIFEST)
    assert "optax==0.1.9" in manifest
    for rel in manifest.values():
        assert len(rel.sha256) == 64 and rel.why


def test_a_release_is_today_s_stack_with_its_pin_built_once(env):
    """A release's environment holds today's stack, pinned as this interpreter has it (the
    very files, linked from uv's cache), with the release's pin and the manifest's hash in
    place of its package's; it is built once, and keyed by what it is built from."""
    import jax

    release = targets.environment("fakepkg==1.0")
    python = envs.ensure(release, log=pytest.fail)  # built by the fixture: no second build
    pins = (python.parent.parent / envs.PINS).read_text()
    sha = r.resolve("fakepkg==1.0").sha256
    assert f"fakepkg==1.0 --hash=sha256:{sha}\n" in pins
    assert f"jax=={jax.__version__} --hash=sha256:" in pins
    site = envs.site_packages(python.parent.parent)
    assert os.path.samefile(site / "jax" / "__init__.py", jax.__file__)
    assert envs.venv_dir(release).name == f"fakepkg-1.0-{release.key}"


def test_another_lock_is_another_release_environment(tmp_path, monkeypatch):
    """What completes a release (etils for optax 0.2.3) is pinned by the lock, which no
    reported package names: a changed lock changes the environment's key."""
    monkeypatch.delenv("CASEBOOK_MANIFEST", raising=False)  # the real one
    before = targets.environment("optax==0.1.9").key
    lock = tmp_path / "requirements.txt"
    lock.write_text(targets.REQUIREMENTS.read_text().replace("etils==", "etils==0.0.1.dev0+", 1))
    monkeypatch.setattr(targets, "REQUIREMENTS", lock)
    assert targets.environment("optax==0.1.9").key != before


def test_the_set_up_removes_a_target_s_environments_of_older_pins(tmp_path):
    ready = {"optax-0.1.9-" + "a" * 16, "era-optax-828-" + "b" * 16}
    old = ["optax-0.1.9-" + "c" * 16, "optax-0.1.9-" + "c" * 16 + ".failed"]
    kept = [
        *ready,
        "optax-0.1.9-fix-B-" + "d" * 16,
        "casebook-path",
        "optax-0.1.9-" + "a" * 16 + ".partial-7",
    ]
    for name in [*old, *kept]:
        (tmp_path / name).mkdir(parents=True) if "." not in name[-8:] else (tmp_path / name).touch()
    assert r._sweep_stale(tmp_path, ready) == sorted(old)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(kept)


def test_what_a_release_requires_and_today_s_stack_lacks_is_added(env):
    """fakepkg 2.0 requires etils (as optax 0.2.3 does), which no package of today's stack
    requires: its environment gets this interpreter's etils, and not what an extra needs."""
    import etils

    python = envs.ensure(targets.environment("fakepkg==2.0"), log=pytest.fail)
    site = envs.site_packages(python.parent.parent)
    pins = (python.parent.parent / envs.PINS).read_text()
    assert f"etils=={etils.__version__} --hash=sha256:" in pins
    assert (site / "etils").is_dir() and not (site / "sphinx").exists()


def test_unknown_release_lists_known_ones(env):
    with pytest.raises(
        r.UnknownRelease, match=r"fakepkg==9\.9 is not in the manifest.*fakepkg==1\.0"
    ):
        r.run("pass", "fakepkg==9.9")
    with pytest.raises(r.UnknownRelease, match="package==version"):
        r.run("pass", "fakepkg 1.0")


def test_missing_from_cache_names_the_setup_command(env, tmp_path, monkeypatch):
    """Off demand, uv builds a missing environment offline; where its cache lacks a wheel,
    the run fails at once, naming the set-up step, and builds nothing."""
    monkeypatch.setenv("CASEBOOK_CACHE", str(tmp_path / "empty"))
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "empty-uv-cache"))
    monkeypatch.delenv("UV_FIND_LINKS")
    monkeypatch.delenv(envs.ON_DEMAND_ENV, raising=False)
    for _ in range(2):  # no failure record turns it into another error
        with pytest.raises(r.ReleaseNotCached, match=r"python3 -m casebook setup"):
            r.run("import fakepkg", "fakepkg==1.0")
    assert not list((tmp_path / "empty").glob("envs/fakepkg*"))


def test_a_wheel_that_is_not_the_manifest_s_installs_nothing(env, tmp_path, monkeypatch):
    """A manifest whose sha256 is not the wheel's (a changed entry, a tampered wheel): uv
    refuses the wheel, nothing is installed, and the error names the sha256."""
    text = env["manifest"].read_text()
    start = text.index('sha256 = "') + len('sha256 = "')
    wrong = tmp_path / "m.toml"
    wrong.write_text(text[:start] + "f" * 64 + text[start + 64 :])
    monkeypatch.setenv("CASEBOOK_MANIFEST", str(wrong))
    with pytest.raises(r.HashMismatch, match="does not match the sha256"):
        r.run("import fakepkg", "fakepkg==1.0")
    built = [p.name for p in (env["cache"] / "envs").iterdir() if "partial" in p.name]
    assert built == [] and not envs.venv_dir(targets.environment("fakepkg==1.0")).exists()


# ----------------------------------------------------------------------------- runs

CODE = """
import fakepkg
print("merged:", fakepkg.merge(True, False, False))
result = {"type": type(fakepkg.merge(True, False, False)).__name__, "x": X}
"""


def test_run_returns_a_structured_outcome(env):
    out = r.run(CODE, "fakepkg==1.0", inputs={"X": [1, 2]})
    assert out.ok and out.exc_type is None
    assert out.stdout == "merged: 0\n"
    assert out.result == {"type": "int", "x": [1, 2]}
    assert out.versions["fakepkg"]["version"] == "1.0"
    assert out.versions["fakepkg"]["file"].startswith(str(env["cache"]))
    r.expect(out, versions={"fakepkg": "1.0"})
    with pytest.raises(r.ExpectationError, match="expected fakepkg 2.0 to be imported, got 1.0"):
        r.expect(out, versions={"fakepkg": "2.0"})


def test_imported_lists_the_case_packages_in_a_fixed_order():
    versions = {
        "optax": {"version": "0.1.9", "file": ""},
        "numpy": {"version": "2", "file": ""},
        "jax": {"version": "0.10.2", "file": ""},
    }
    out = r.Outcome(
        target="optax==0.1.9",
        package="optax",
        ok=True,
        exc_type=None,
        exc_types=[],
        message="",
        traceback="",
        stdout="",
        stderr="",
        versions=versions,
        result=None,
        seconds=1.0,
    )
    assert out.imported == "jax 0.10.2, optax 0.1.9"


def test_jax_runs_on_cpu_in_subprocesses(env):
    out = r.run("import os; result = os.environ.get('JAX_PLATFORMS')", "fakepkg==1.0")
    assert out.result == "cpu"
    out = r.run("import os; result = os.environ.get('JAX_ENABLE_X64')", "fakepkg==1.0", x64=True)
    assert out.result == "1"


def test_exception_is_recorded_and_expectations_check_type_and_message(env):
    code = "import fakepkg\nraise TypeError('leaf found_nan: bool[] vs int32[]')"
    out = r.run(code, "fakepkg==2.0")
    assert not out.ok and out.exc_type == "TypeError"
    assert "Exception" in out.exc_types  # the MRO, so a base class also matches
    assert out.summary == "TypeError: leaf found_nan: bool[] vs int32[]"
    r.expect(out, raises=TypeError, match=r"found_nan: bool\[\]")
    r.expect(out, raises="Exception")
    with pytest.raises(r.ExpectationError, match="expected ValueError, but it raised TypeError"):
        r.expect(out, raises=ValueError)
    with pytest.raises(r.ExpectationError, match="no match for 'last_finite'") as info:
        r.expect(out, raises=TypeError, match="last_finite")
    assert "--- traceback ---" in str(info.value)  # the captured evidence comes along


def test_expected_failure_that_passes_fails_loudly(env):
    out = r.run(CODE, "fakepkg==2.0", inputs={"X": 0})
    with pytest.raises(
        r.ExpectationError, match="expected TypeError, but the code ran without"
    ) as info:
        r.expect(out, raises=TypeError)
    assert "merged: False" in str(info.value)  # stdout is shown


def test_expected_success_that_raises_shows_the_traceback(env):
    out = r.run("def f():\n    raise KeyError('w')\nf()", "fakepkg==1.0")
    with pytest.raises(r.ExpectationError, match=r"(?s)run cleanly.*KeyError.*line 2, in f"):
        r.expect(out)


def test_hanging_code_is_killed_and_reported(mode):
    with pytest.raises(r.RunTimeout, match=r"still running after 2 s; killed(?s:.*)started"):
        r.run(
            "print('started', flush=True)\nimport time\ntime.sleep(60)", "fakepkg==1.0", timeout=2
        )


@pytest.fixture(params=["warm", "cold"])
def mode(request, env, monkeypatch):
    """Each guarantee holds for runs forked from a warm server and for fresh interpreters."""
    monkeypatch.setenv("CASEBOOK_COLD_RUNS", "1" if request.param == "cold" else "0")
    return request.param


def test_a_crash_without_outcome_is_reported(mode):
    with pytest.raises(r.RunCrashed, match="exited with code 3"):
        r.run("import os\nos._exit(3)", "fakepkg==1.0")


def test_a_killed_run_names_the_signal(env):
    with pytest.raises(r.RunCrashed, match="killed by signal 9"):
        r.run("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)", "fakepkg==1.0")


def _impostor(tmp_path: Path, package: str) -> Path:
    """A folder holding another ``package``, version ``impostor``."""
    impostor = tmp_path / "impostor"
    (impostor / package).mkdir(parents=True)
    (impostor / package / "__init__.py").write_text(
        "__version__ = 'impostor'\n"
        "class config:  # what a warm server sets per run\n"
        "    update = staticmethod(lambda name, value: None)\n"
    )
    return impostor


def _plant_first_on_path(tmp_path, monkeypatch, directory):
    """A sitecustomize that puts ``directory`` first on ``sys.path`` at start-up, as a
    leftover ``PYTHONPATH`` entry would."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(f"import sys\nsys.path.insert(0, {str(directory)!r})\n")
    monkeypatch.setenv("PYTHONPATH", str(site))


def _plant_in_the_environment(tmp_path, monkeypatch, target, directory):
    """A ``.pth`` file in a private copy of ``target``'s environment (built offline in a
    cache of the test's own) that puts ``directory`` first on ``sys.path``, as a stray
    editable install would."""
    monkeypatch.setenv("CASEBOOK_CACHE", str(tmp_path / "cache"))
    python = envs.ensure(targets.environment(target), log=lambda _: None, online=False)
    site = envs.site_packages(python.parent.parent)
    (site / "zz-stray.pth").write_text(f"import sys; sys.path.insert(0, {str(directory)!r})\n")


def test_a_release_run_sees_only_its_environment_and_refuses_a_shadow(mode, tmp_path, monkeypatch):
    """A release's run ignores this process's ``PYTHONPATH`` (nothing but its environment
    and the child program's link is on its path); what still puts another copy first (a
    stray ``.pth`` file in the environment) makes the run import it, and that is refused."""
    impostor = _impostor(tmp_path, "fakepkg")
    _plant_first_on_path(tmp_path, monkeypatch, impostor)
    assert r.run("import fakepkg; result = fakepkg.__version__", "fakepkg==1.0").result == "1.0"
    _plant_in_the_environment(tmp_path, monkeypatch, "fakepkg==1.0", impostor)
    with pytest.raises(r.OverlayShadowed, match="fakepkg was imported from .*impostor"):
        r.run("import fakepkg", "fakepkg==1.0")


@pytest.fixture(params=["warm", "cold"])
def real_mode(request, monkeypatch):
    """Warm and cold runs, on the real manifest and cache (no fake releases)."""
    monkeypatch.delenv("CASEBOOK_MANIFEST", raising=False)
    monkeypatch.delenv("CASEBOOK_CACHE", raising=False)
    monkeypatch.setenv("CASEBOOK_COLD_RUNS", "1" if request.param == "cold" else "0")
    return request.param


def test_a_current_run_refuses_an_impostor_package(real_mode, tmp_path, monkeypatch):
    """The current stack is guarded too: an ``optax`` from elsewhere is refused."""
    _plant_first_on_path(tmp_path, monkeypatch, _impostor(tmp_path, "optax"))
    with pytest.raises(r.OverlayShadowed, match="optax was imported from .*impostor"):
        r.run("import optax", "current")


def test_a_current_run_refuses_an_old_release_left_on_the_path(real_mode, tmp_path, monkeypatch):
    """The break that stayed green: after a run on optax 0.1.9, a current run that finds
    0.1.9 first on its path (a planted fault) must not pass as the current release."""
    old = tmp_path / "old"
    old.mkdir()
    (old / "optax").symlink_to(r.source_file("optax==0.1.9", "optax"))
    _plant_first_on_path(tmp_path, monkeypatch, old)
    assert r.run("import optax; result = optax.__version__", "optax==0.1.9").result == "0.1.9"
    with pytest.raises(r.OverlayShadowed, match="optax was imported from"):
        r.run("import optax; result = optax.__version__", "current")


def test_a_release_run_refuses_a_shadowed_jax(real_mode, tmp_path, monkeypatch):
    """Not only the release's package: jax too must come from the run's environment."""
    _plant_in_the_environment(tmp_path, monkeypatch, "optax==0.1.9", _impostor(tmp_path, "jax"))
    with pytest.raises(r.OverlayShadowed, match="jax was imported from .*impostor"):
        r.run("import jax", "optax==0.1.9")


def test_a_cold_child_starts_with_nothing_of_the_case_imported(env, monkeypatch):
    """A fresh interpreter imports only the standard library before the cell runs."""
    monkeypatch.setenv("CASEBOOK_COLD_RUNS", "1")
    out = r.run(
        "import sys\nresult = [m for m in ('jax', 'numpy', 'optax', 'IPython', 'fakepkg')"
        " if m in sys.modules]",
        "fakepkg==1.0",
    )
    assert out.result == []


def test_a_warm_run_starts_before_anything_ran(env):
    """A warm run has jax and the release imported, but no backend, no array, no IPython."""
    out = r.run(
        "import sys\nfrom jax._src import xla_bridge\n"
        "result = [sorted(xla_bridge._backends), 'IPython' in sys.modules]",
        "fakepkg==1.0",
    )
    assert out.result == [[], False]


LEAK = """
import os, jax, fakepkg
before = [hasattr(fakepkg, "leaked"), os.environ.get("LEAKED"), jax.config.jax_enable_x64,
          jax.numpy.zeros(1).dtype.name]
fakepkg.leaked = True
os.environ["LEAKED"] = "1"
jax.config.update("jax_enable_x64", not jax.config.jax_enable_x64)
result = before
"""


def test_no_run_leaks_state_into_the_next(env):
    """Module attributes, the environment and jax's config set by one run are gone in the
    next; x64 is what each run asks for."""
    runs = [r.run(LEAK, "fakepkg==1.0", x64=x64).result for x64 in (False, False, True, False)]
    assert runs == [
        [False, None, False, "float32"],
        [False, None, False, "float32"],
        [False, None, True, "float64"],
        [False, None, False, "float32"],
    ]


def test_warm_and_cold_runs_report_the_same(env, monkeypatch):
    """The same cell gives the same outcome, versions included, warm or cold."""
    code = "import fakepkg\nresult = fakepkg.merge(True, 1, 2)\nraise ValueError('late')"
    warm = r.run(code, "fakepkg==1.0")
    monkeypatch.setenv("CASEBOOK_COLD_RUNS", "1")
    cold = r.run(code, "fakepkg==1.0")
    fields = ("ok", "exc_type", "message", "versions", "frames")
    assert [getattr(warm, f) for f in fields] == [getattr(cold, f) for f in fields]


def test_importing_the_package_imports_neither_jax_nor_ipython():
    """``python3 -m casebook setup`` imports casebook.releases before anything is installed."""
    code = (
        "import sys, casebook.releases\n"
        "print([m for m in ('jax', 'numpy', 'IPython') if m in sys.modules])"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=r.REPO_ROOT,
    )
    assert proc.stdout.strip() == "[]"


def test_child_module_run_directly(tmp_path):
    """The child program on its own: the same command line :func:`run` gives it."""
    (tmp_path / "cell.py").write_text(
        "import wave\nprint('hi', X)\nresult = {'x': X}\n"
        "def f():\n    raise ValueError('bad x')\nf()\n"
    )
    (tmp_path / "inputs.json").write_text(json.dumps({"X": 3}))
    out = tmp_path / "outcome.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            child.__name__,
            str(tmp_path / "cell.py"),
            str(out),
            "wave,fakepkg",
            str(tmp_path / "inputs.json"),
            "<cell on t>",
        ],
        capture_output=True,
        text=True,
        cwd=r.REPO_ROOT,
    )
    assert proc.returncode == 0 and proc.stdout == "hi 3\n", proc.stderr
    rec = json.loads(out.read_text())
    assert rec["ok"] is False and rec["exc_type"] == "ValueError" and rec["message"] == "bad x"
    assert rec["exc_types"] == ["ValueError", "Exception", "BaseException", "object"]
    assert (
        rec["traceback"].startswith("Traceback")
        and 'File "<cell on t>", line 5, in f' in rec["traceback"]
    )
    assert "raise ValueError('bad x')" in rec["traceback"]  # the cell's lines, via linecache
    assert "child.py" not in rec["traceback"]  # the child's own frame is cut
    assert rec["result"] == {"x": 3}
    assert list(rec["versions"]) == ["wave"]  # imported by the code (after it ran); fakepkg was not
    assert rec["versions"]["wave"]["file"].endswith("wave.py")


def test_child_functions_in_process():
    rec, ns = child.run_cell("import sys\nresult = 2 * X\nsys.exit(4)", "<cell>", {"X": 21})
    assert ns["result"] == 42 and rec["exc_type"] == "SystemExit" and not rec["ok"]
    assert list(child.imported_versions(["json", "no_such_module"])) == ["json"]

    class Array:
        def tolist(self):
            return [1, 2]

    assert json.loads(child.encode({"result": Array()}))["result"] == [1, 2]
    cycle: list = []
    cycle.append(cycle)
    assert json.loads(child.encode({"result": cycle}))["result"] == "[[...]]"


# -------------------------------------------------------------------------- patches


def _select_fix() -> r.PatchedRelease:
    """The fake package's buggy blend replaced by a select: the patch these tests apply."""
    return r.patched(
        "fakepkg==1.0",
        r.Patch(
            "fakepkg/__init__.py",
            "return (1 - flag) * a + flag * b      # the buggy blend",
            "return b if flag else a",
        ),
        name="select",
    )


def test_patched_release_applies_one_line_and_shows_a_diff(env):
    fix = _select_fix()
    assert fix.label == "fakepkg==1.0 + select"
    assert "-    return (1 - flag) * a + flag * b" in fix.diff()
    assert "+    return b if flag else a" in fix.diff()
    out = r.run(CODE, fix, inputs={"X": 0})
    assert out.stdout == "merged: False\n" and out.target == "fakepkg==1.0 + select"
    assert r.source_file(fix, "fakepkg/__init__.py").read_text().count("b if flag else a") == 1


def _bytecode_matches_source(folder: Path) -> dict[str, bool]:
    """Per module of ``folder`` that has bytecode: whether it is its source's compiled code."""
    import importlib.util
    import marshal

    out = {}
    for source in folder.rglob("*.py"):
        cached = Path(importlib.util.cache_from_source(str(source)))
        if cached.exists():
            code = marshal.loads(cached.read_bytes()[16:])
            fresh = compile(source.read_text(), str(source), "exec", dont_inherit=True)
            out[source.relative_to(folder).as_posix()] = code == fresh
    return out


def test_environments_are_compiled_and_a_patch_never_writes_into_a_linked_file(
    env, tmp_path, monkeypatch
):
    """Where runs write no bytecode, a release's environment is compiled when it is built:
    today's stack by linking this interpreter's own bytecode of the very same files, the
    rest compiled. A patched release's environment gets a new file in place of the
    patched one (uv links the base's from its cache, shared by every environment and
    clone, which must never change) and that file's own bytecode."""
    import importlib.util

    import jax

    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("CASEBOOK_CACHE", str(tmp_path / "cache"))
    fix = _select_fix()  # builds the base's environment, to read the file it patches
    base = r.source_file("fakepkg==1.0", "fakepkg")
    patched = r.source_file(fix, "fakepkg")
    assert _bytecode_matches_source(base) == {"__init__.py": True}
    assert _bytecode_matches_source(patched) == {"__init__.py": True}
    assert "the buggy blend" in (base / "__init__.py").read_text()
    assert not os.path.samefile(base / "__init__.py", patched / "__init__.py")
    borrowed = importlib.util.cache_from_source(str(base.parent / "jax" / "__init__.py"))
    assert os.path.samefile(borrowed, importlib.util.cache_from_source(jax.__file__))


def test_concurrent_first_use_of_a_patched_release(env):
    """Regression: two version-table workers once made the same patched copy at once."""
    fix = r.patched(
        "fakepkg==2.0",
        r.Patch(
            "fakepkg/__init__.py",
            "return b if flag else a               # the fixed select",
            "return b if flag else a  # concurrent",
        ),
        name="c",
    )
    table = r.version_table({"a": "import fakepkg", "b": "import fakepkg"}, [fix], workers=2)
    table.check({fix.label: None})
    assert "# concurrent" in r.source_file(fix, "fakepkg/__init__.py").read_text()


def test_patch_must_match_exactly_one_line(env):
    with pytest.raises(r.PatchError, match="found 0"):
        r.patched("fakepkg==1.0", r.Patch("fakepkg/__init__.py", "no such line", "x"), name="bad")


# ---------------------------------------------------------------------- version table


def test_version_table_runs_every_cell_and_checks(env):
    triggers = {
        "bool kept": "import fakepkg\nassert fakepkg.merge(True, False, False) is False",
        "imports": "import fakepkg",
    }
    table = r.version_table(triggers, ["fakepkg==1.0", "fakepkg==2.0"])
    assert table.rows == ["fakepkg==1.0", "fakepkg==2.0"]
    assert table.outcome("fakepkg==1.0").exc_type == "AssertionError"
    table.check(
        {"fakepkg==1.0": {"bool kept": AssertionError, "imports": None}, "fakepkg==2.0": None}
    )
    with pytest.raises(r.ExpectationError):
        table.check({"fakepkg==2.0": {"bool kept": (AssertionError, "")}})
    with pytest.raises(KeyError, match="no row"):
        table.check({"fakepkg==3.0": None})
    text = str(table)
    assert "fakepkg==1.0" in text and "AssertionError" in text
    assert "<table>" in table._repr_html_()


# ------------------------------------------------------------------------ cell magic


def test_cell_magic_runs_asserts_and_stores(env, capsys):
    ns = {}
    out = r.on_release(
        "fakepkg==1.0 --raises ZeroDivisionError --match '-?division' --as o",
        "import fakepkg\n1 / 0",
        ns,
    )
    assert ns["o"] is out
    printed = capsys.readouterr().out
    assert printed.startswith("[ran on fakepkg==1.0:")
    assert "ZeroDivisionError: division by zero" in printed
    with pytest.raises(r.ExpectationError):
        r.on_release("fakepkg==1.0 --ok", "1 / 0", ns)


def test_cell_magic_resolves_patched_release_variables_and_rejects_bad_lines(env):
    ns = {"fix": _select_fix()}
    out = r.on_release("fix --ok", "import fakepkg\nassert fakepkg.merge(1, 'a', 'b') == 'b'", ns)
    assert out.target == "fakepkg==1.0 + select"
    with pytest.raises(ValueError, match="exactly one target"):
        r.on_release("", "pass", ns)
    with pytest.raises(ValueError, match="unknown option --bogus"):
        r.on_release("fakepkg==1.0 --bogus", "pass", ns)
    with pytest.raises(ValueError, match="exclude each other"):
        r.on_release("fakepkg==1.0 --ok --raises TypeError", "pass", ns)
    with pytest.raises(ValueError, match="exactly one target"):
        r.on_release("fakepkg==1.0 fakepkg==2.0", "pass", ns)
    with pytest.raises(ValueError, match="--raises: expected one argument"):
        r.on_release("fakepkg==1.0 --raises", "pass", ns)
    with pytest.raises(ValueError, match="--timeout"):
        r.on_release("fakepkg==1.0 --timeout soon", "pass", ns)


def test_cell_magic_help_lists_its_options():
    """``%%on_release?`` in a kernel prints the magic's docstring: usage and every option."""
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "casebook.releases")
    help_text = ip.object_inspect_text("%%on_release")
    assert "%%on_release [--raises EXC]" in help_text
    for option in (
        "--raises EXC",
        "--match REGEX",
        "--ok",
        "--x64",
        "--timeout S",
        "--as NAME",
        "target",
    ):
        assert option in help_text, option


def test_an_outcome_keeps_its_code_to_run_again_elsewhere(env):
    first = r.run("  import fakepkg\n  result = fakepkg.merge(True, 1, 2)", "fakepkg==1.0")
    again = r.run(first.code, "fakepkg==2.0")
    assert first.code == "import fakepkg\nresult = fakepkg.merge(True, 1, 2)"
    assert (first.version("fakepkg"), again.version("fakepkg"), again.result) == ("1.0", "2.0", 2)


@pytest.fixture
def own_servers(env, monkeypatch):
    """Warm runs (the suite's processes may run cold), this process's servers stopped after."""
    monkeypatch.setenv("CASEBOOK_COLD_RUNS", "0")
    pool.shutdown()
    yield
    pool.shutdown()


@pytest.fixture
def light_servers(own_servers, monkeypatch):
    """:func:`own_servers` that preload the release alone, not jax, equinox and diffrax
    (2-3 s a start): for the tests of the servers' life, whose runs import no jax."""
    monkeypatch.setattr(pool, "preloads", lambda package: (package,))


def test_a_server_preloads_equinox_and_diffrax_only_where_its_process_imported_them(monkeypatch):
    """A page that never imports diffrax does not pay for it at each server start."""
    monkeypatch.delitem(sys.modules, "diffrax", raising=False)
    monkeypatch.setitem(sys.modules, "equinox", types.ModuleType("equinox"))
    assert pool.preloads("optax") == ("jax", "optax", "equinox")
    monkeypatch.setitem(sys.modules, "diffrax", types.ModuleType("diffrax"))
    assert pool.preloads(None) == ("jax", "optax", "equinox", "diffrax")
    assert pool.preloads("diffrax") == ("jax", "diffrax", "equinox")


SERVER_PID = (
    "import os\n"  # the run's parent is a monitor forked from the server
    "monitor = os.getppid()\n"
    "server = int(open(f'/proc/{monitor}/stat').read().rsplit(')', 1)[1].split()[1])\n"
)


def test_one_server_serves_its_process_and_each_run_starts_fresh(light_servers, monkeypatch):
    """The second run forks from the server the first started, and meets neither the
    module attribute nor the environment variable the first run set; each run sees the
    process's environment at its call."""
    code = SERVER_PID + (
        "import fakepkg\n"
        "seen = [hasattr(fakepkg, 'patched'), os.environ.get('LEFT'), os.environ.get('CASEBOOK_ASKED')]\n"
        "fakepkg.patched = True; os.environ['LEFT'] = '1'\n"
        "result = [server, seen]\n"
    )
    monkeypatch.setenv("CASEBOOK_ASKED", "first")  # no server reads casebook's variables
    first, seen_first = r.run(code, "fakepkg==1.0").result
    monkeypatch.delenv("CASEBOOK_ASKED")
    second, seen_second = r.run(code, "fakepkg==1.0").result
    assert first == second and [s.pid for s in pool.live_servers()] == [first]
    assert seen_first == [False, None, "first"] and seen_second == [False, None, None]


def _running(pid: int) -> bool:
    """Whether ``pid`` runs: alive, and not a zombie (whose command line is empty) left for
    a parent that has not reaped it."""
    try:
        return storage.process_alive(pid) and bool(Path(f"/proc/{pid}/cmdline").read_bytes())
    except OSError:
        return False


@pytest.mark.parametrize("how", ["exits", "is killed"])
def test_a_process_s_servers_end_when_it_does(env, how):
    """A server is its process's: it ends at the process's exit, and within a second or two
    of its being killed (SIGKILL: no clean-up runs), so no kernel leaves one behind."""
    program = (
        "import sys, time\nfrom casebook import releases\n"
        "print(releases.run(sys.argv[1], 'fakepkg==1.0').result, flush=True)\n"
        "time.sleep(60 if sys.argv[2] == 'is killed' else 0)\n"
    )
    child_env = {**os.environ, "CASEBOOK_COLD_RUNS": "0"}
    proc = subprocess.Popen(
        [sys.executable, "-c", program, SERVER_PID + "result = server", how],
        stdout=subprocess.PIPE,
        text=True,
        env=child_env,
    )
    assert proc.stdout is not None
    server = int(proc.stdout.readline())
    assert storage.process_alive(server)
    if how == "is killed":
        proc.kill()
    proc.wait(timeout=30)
    deadline = time.monotonic() + 10
    while _running(server) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running(server), f"the server outlived its process, which {how}"


CACHE_HITS = (
    "import jax, jax.numpy as jnp\n"
    "hits = []\n"
    "jax.monitoring.register_event_listener(\n"
    "    lambda event, **kw: hits.append(event) if event.endswith('cache_hits') else None\n"
    ")\n"
    "jax.jit(lambda x: jnp.cos(x) * 3.25)(jnp.arange(5.0)).block_until_ready()\n"
    "result = len(hits)\n"
)


@pytest.mark.parametrize("suite_cache", [False, True], ids=["the cache's", "the test run's"])
def test_warm_runs_share_one_compilation_cache(own_servers, monkeypatch, tmp_path, suite_cache):
    """A compile of one run is read from the cache by the next, on today's jax in a
    release's environment or not: the user's cache in the temporary folder, or, where
    the test command names one for every process of its run, that one. Without it, a cold
    run neither reads nor writes the user's."""
    for name in ("JAX_COMPILATION_CACHE_DIR", "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))  # a user's, empty
    cache = pool.shared_compile_cache()
    if suite_cache:
        cache = tmp_path / "the-run-s-cache"
        monkeypatch.setenv("JAX_COMPILATION_CACHE_DIR", str(cache))
    else:
        assert r.run(CACHE_HITS, env={"COLD": "1"}).result == 0 and not cache.exists()
    first, second = r.run(CACHE_HITS).result, r.run(CACHE_HITS).result
    assert first == 0 and second > 0 and any(cache.iterdir())
    assert r.run(CACHE_HITS, "fakepkg==1.0").result == second  # same programs, same jax
    assert suite_cache or not (tmp_path / "the-run-s-cache").exists()


class _Asked(Exception):
    """Raised by a stand-in pool: the run went no further than asking it."""


def test_an_era_run_never_gets_the_compilation_cache(monkeypatch):
    """An era's jax is not today's (it may not load today's cache): its runs do not get it."""
    asked = []

    def ask(*args: object, compile_cache: Path | None, **kwargs: object) -> None:
        asked.append(compile_cache is not None)
        raise _Asked

    def place(target: str) -> envs.Place:
        return envs.Place(target, sys.executable, (), None, {}, None, target[:4] != "era:")

    server = types.SimpleNamespace(socket_path="unused", log="unused")
    monkeypatch.setenv("CASEBOOK_COLD_RUNS", "0")
    monkeypatch.setattr(pool, "server_for", lambda *args: server)
    monkeypatch.setattr(pool, "execute", ask)
    monkeypatch.setattr(targets, "place_of", place)
    for target in ("era:fake", "current"):
        with pytest.raises(_Asked):
            r.run("pass", target)
    assert asked == [False, True]


def test_compile_seconds_times_compiles_with_the_cache_off(tmp_path):
    """The test command turns jax's persistent compilation cache on for every process:
    ``compile_seconds`` compiles anyway, reading nothing from it, then leaves it on."""
    program = (
        "import jax, jax.numpy as jnp\nfrom casebook import bench\n"
        "hits = []\n"
        "jax.monitoring.register_event_listener(lambda e, **k: hits.append(e))\n"
        "f = lambda x: jnp.sin(x) * 2\n"
        "jax.jit(f)(jnp.ones(3)); jax.clear_caches(); jax.jit(f)(jnp.ones(3))\n"
        "cached = hits.count('/jax/compilation_cache/cache_hits')\n"
        "bench.compile_seconds(f, jnp.ones(3), repeats=2)\n"
        "timed = hits.count('/jax/compilation_cache/cache_hits') - cached\n"
        "jax.clear_caches(); jax.jit(f)(jnp.ones(3))\n"
        "print(cached, timed, hits.count('/jax/compilation_cache/cache_hits') - cached)\n"
    )
    env = {
        **os.environ,
        "JAX_PLATFORMS": "cpu",
        "JAX_COMPILATION_CACHE_DIR": str(tmp_path),
        "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
    }
    run = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True)
    cached, timed, after = map(int, run.stdout.split() or [0, -1, 0])
    assert cached > 0 and timed == 0 and after > 0, run.stderr[-2000:]


def test_the_key_ignores_only_what_no_server_reads():
    base = {"PATH": "/bin", "JAX_PLATFORMS": "cpu", "PYTEST_XDIST_WORKER": "gw0"}
    assert pool.key_of("py", base) == pool.key_of("py", {**base, "PYTEST_XDIST_WORKER": "gw1"})
    assert pool.key_of("py", base) == pool.key_of("py", {**base, "JAX_ENABLE_X64": "1"})
    assert pool.key_of("py", base) == pool.key_of("py", {**base, "CASEBOOK_COLD_RUNS": "0"})
    assert pool.key_of("py", base) != pool.key_of("py", {**base, "JAX_PLATFORMS": ""})
    assert pool.key_of("py", base) != pool.key_of("py", {**base, "PYTHONPATH": "/elsewhere"})
    assert pool.key_of("py", base) != pool.key_of("other-python", base)


def test_the_key_changes_when_a_package_is_installed_or_removed(tmp_path):
    """A server outlives its kernel, so a ``pip install -U`` between two runs must lead
    the second to a new server: the key holds the site-packages folder's mtime."""
    site_packages = tmp_path / "venv" / "lib" / "python3.13" / "site-packages"
    site_packages.mkdir(parents=True)
    python = str(tmp_path / "venv" / "bin" / "python")
    before = pool.key_of(python, {})
    os.utime(site_packages, ns=(0, 1))  # as a new .dist-info folder would
    assert pool.key_of(python, {}) != before
    assert pool.key_of(sys.executable, {}) == pool.key_of(sys.executable, {})


@pytest.mark.parametrize("how", ["stopped", "killed"])
def test_a_gone_server_is_replaced_and_the_run_still_happens(light_servers, how):
    """A server stopped (SIGTERM, or evicted) or killed (SIGKILL: its socket stays
    behind) is replaced by the next run, which runs once."""
    r.run("import fakepkg", "fakepkg==1.0")
    (first,) = pool.live_servers()
    if how == "stopped":
        pool.shutdown()
    else:
        os.kill(first.pid, 9)
        first.process.wait()
    assert r.run("result = 1", "fakepkg==1.0").result == 1
    (second,) = pool.live_servers()
    assert second.pid != first.pid


@pytest.mark.parametrize("behaviour", ["exit 3", "sleep 30"])
def test_a_server_that_dies_or_hangs_at_start_is_reported(
    own_servers, tmp_path, monkeypatch, behaviour
):
    fake = tmp_path / "bin" / "python"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\necho preloading >&2\n{behaviour}\n")
    fake.chmod(0o755)
    monkeypatch.setattr(pool, "START_TIMEOUT", 1.0)
    said = "it exited" if behaviour == "exit 3" else "no answer in 1 s"
    with pytest.raises(r.RunCrashed, match=f"did not start \\({said}\\)(?s:.*)preloading"):
        pool.server_for(str(fake), {"PATH": os.environ["PATH"]}, ("jax",))


def test_a_process_keeps_at_most_max_servers(light_servers, monkeypatch):
    monkeypatch.setattr(pool, "MAX_SERVERS", 1)
    r.run("import fakepkg", "fakepkg==1.0")
    (old,) = pool.live_servers()
    r.run("import fakepkg", "fakepkg==2.0")
    (new,) = pool.live_servers()
    assert new.pid != old.pid and not old.alive()


def test_a_missing_release_downloads_on_demand_only(tmp_path, monkeypatch):
    """Off demand (the test suite), a missing environment is built offline (and fails,
    naming the set-up step, where uv's cache lacks a wheel); on demand (Colab), its first
    run builds it online, as the set-up does."""
    monkeypatch.setenv("CASEBOOK_CACHE", str(tmp_path / "empty"))
    monkeypatch.delenv("CASEBOOK_MANIFEST", raising=False)  # the book's manifest
    online: list[bool] = []

    def build(env: envs.Env, base: str, venv: Path, say: object) -> None:
        online.append(say is not None)
        raise r.ReleaseNotCached("not built here")

    monkeypatch.setattr(envs, "_build", build)
    monkeypatch.delenv(envs.ON_DEMAND_ENV, raising=False)
    with pytest.raises(r.ReleaseNotCached):
        r.run("pass", "optax==0.1.9")
    monkeypatch.setenv(envs.ON_DEMAND_ENV, "1")
    with pytest.raises(r.ReleaseNotCached):
        r.run("pass", "optax==0.1.9")
    assert online == [False, True]


def test_expect_records_what_it_asserted_and_where():
    from casebook import releases

    before = len(releases.asserted())
    releases.expect(releases.run("int('x')"), raises=ValueError, match="invalid literal")
    assert releases.asserted()[before:] == [
        releases.Asserted(
            "current",
            "ValueError",
            "invalid literal",
            "invalid literal for int() with base 10: 'x'",
        )
    ]

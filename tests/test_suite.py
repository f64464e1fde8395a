"""casebook.maintainer.tools.suite and conftest.py: in the test command, a benchmark cell runs alone.

The checks read the lock without waiting (``LOCK_NB``), so nothing here is timed.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys

import nbformat
import pytest
from nbclient import NotebookClient

from casebook.maintainer.tools import suite

READS_PAGES = False

PROBE = """
import fcntl, os

READS_PAGES = False
def can(mode):
    with open(os.environ["CASEBOOK_SUITE_LOCK"], "a") as f:
        try:
            fcntl.flock(f, mode | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(f, fcntl.LOCK_UN)
        return True
"""


def test_the_lock_is_off_without_the_variable(monkeypatch) -> None:
    monkeypatch.delenv(suite.LOCK_ENV, raising=False)
    with suite.exclusive(), suite.exclusive():  # would deadlock if it were on
        pass


def test_an_exclusive_holder_keeps_shared_work_out(tmp_path, monkeypatch) -> None:
    lock = tmp_path / "suite.lock"
    monkeypatch.setenv(suite.LOCK_ENV, str(lock))
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from casebook.maintainer.tools import suite; import sys\n"
            "with suite.exclusive():\n    print('held', flush=True); sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with open(lock, "a") as f, pytest.raises(BlockingIOError):
            fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
    finally:
        holder.communicate("")


def test_page_cells_hold_the_lock_shared_and_benchmark_cells_exclusively(
    tmp_path, monkeypatch
) -> None:
    """Run a page through nbclient, as nbmake does; each cell reports, from the kernel,
    which modes another process could take while it runs."""
    monkeypatch.setenv(suite.LOCK_ENV, str(tmp_path / "suite.lock"))
    page = nbformat.v4.new_notebook()
    probe = "print(can(fcntl.LOCK_SH), can(fcntl.LOCK_EX))"
    page.cells = [
        nbformat.v4.new_code_cell(PROBE),
        nbformat.v4.new_code_cell(probe),
        nbformat.v4.new_code_cell(probe, metadata={"tags": [suite.BENCHMARK_TAG]}),
    ]
    NotebookClient(page, timeout=120, kernel_name="python3").execute()
    seen = [c.outputs[0]["text"].strip() for c in page.cells[1:]]
    assert seen == ["True False", "False False"]


@pytest.mark.parametrize("found", ["/usr/bin/chromium", None])
def test_the_test_command_says_when_the_browser_tests_skip(monkeypatch, capsys, found):
    """Without chromium the test command names what to install, first and last; with it,
    it says nothing of the kind."""
    monkeypatch.setattr(suite.environment, "setup", lambda gpu: "python")
    monkeypatch.setattr(suite, "run_tests", lambda py, args, env: print("pytest ran"))
    monkeypatch.setattr(suite.shutil, "which", lambda name: found)
    suite.test([])
    lines = capsys.readouterr().out.splitlines()
    if found:
        assert lines == ["pytest ran"]
    else:
        assert lines == [suite.NO_BROWSER, "pytest ran", suite.NO_BROWSER]
        assert "apt-get install chromium" in suite.NO_BROWSER


def test_the_command_s_options_become_pytest_s():
    """``--fresh`` is a variable, not a pytest option; a path replaces the suite; any other
    option joins the whole suite."""
    args, env = suite.pytest_args(["--fresh", "-k", "sync"])
    assert args == [*suite.TEST_ARGS, "-k", "sync"] and env == {"CASEBOOK_FRESH": "1"}
    args, env = suite.pytest_args(["tests/test_suite.py"])
    assert args == [*suite.PARALLEL, "--nbmake", "tests/test_suite.py"] and env == {}


_COLLECT = """
import sys, pytest
for args in eval(sys.argv[1]):
    pytest.main(["--co", "-q", "-p", "no:cacheprovider", *args])
    print("--- end of a collection ---", flush=True)
"""


def _collected(*arglists: list[str]) -> list[list[str]]:
    """The node ids each argument list collects, all in one interpreter (one import of the
    conftest and its stack, not one per list)."""
    run = subprocess.run(
        [sys.executable, "-c", _COLLECT, repr(arglists)],
        capture_output=True,
        text=True,
        cwd=suite.ROOT,
        check=True,
    )
    parts = run.stdout.split("--- end of a collection ---")[:-1]
    return [[line for line in part.splitlines() if "::" in line] for part in parts]


def test_the_shards_together_are_exactly_the_collection():
    """``--shard K/N`` (pytest-split, balanced by ``tests/durations.json``) over pages and
    test files: each item in exactly one shard."""
    paths = ["notebooks/", "tests/test_buildcache.py", "tests/test_display.py"]
    shard_args = [suite.pytest_args(["--shard", f"{k}/3", *paths])[0] for k in (1, 2, 3)]
    assert all(args[: len(suite.PARALLEL)] == suite.PARALLEL for args in shard_args)
    whole, *shards = _collected(
        ["--nbmake", *paths], *[args[len(suite.PARALLEL) :] for args in shard_args]
    )
    assert len(shards) == 3 and all(shards) and sorted(sum(shards, [])) == sorted(whole)
    assert len(set(sum(shards, []))) == len(whole)


def test_a_dead_process_s_folders_are_leftovers_whatever_their_kind(tmp_path, monkeypatch) -> None:
    """A kind of two words (``no-eras``, a page run with the era stacks withheld) is read as
    a kind, not missed; a killed kernel's servers folder is one; the user's compilation
    cache (no pid) never is. The next test command removes them, and only them."""
    import tempfile

    from casebook import storage
    from casebook.releases import _pool

    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead = int(done.stdout)
    dead_ones = [
        f"casebook-no-eras-{dead}-a",
        f"casebook-run-{dead}-b",
        f"casebook-servers-{dead}-c",
    ]
    kept = ["casebook-pool-0", f"{_pool.COMPILE_CACHE}-{os.getuid()}"]
    kept.append(f"casebook-run-{os.getpid()}-c")  # this process's: alive
    for name in (*dead_ones, *kept):
        (tmp_path / name).mkdir()
    assert [p.name for p in storage.leftovers(tmp_path)] == dead_ones
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert [p.name for p in suite.remove_killed_runs()] == dead_ones
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(kept)

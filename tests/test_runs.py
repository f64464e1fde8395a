"""casebook.status.runs: stored page runs per machine, merged per day, shown as one table."""

from __future__ import annotations

from casebook.maintainer.tools import pageruns
from casebook.status import runs


def _record(pages, jax="0.12.0.1"):
    return {
        "device": "gpu: Some GPU",
        "date": "2099-12-31",  # after every commit: no page changed since
        "python": "3.12.3",
        "versions": {"jax": jax},
        "pages": pages,
    }


def test_runs_of_one_machine_and_stack_merge_and_a_new_stack_replaces(tmp_path):
    pageruns.save(_record({"notebooks/01-a.ipynb": {"passed": True, "seconds": 3.0}}), tmp_path)
    pageruns.save(_record({"book/lessons.ipynb": {"passed": False, "seconds": 4.0}}), tmp_path)
    (stored,) = runs.load(tmp_path)
    assert set(stored["pages"]) == {"notebooks/01-a.ipynb", "book/lessons.ipynb"}
    pageruns.save(
        _record({"book/status.ipynb": {"passed": True, "seconds": 1.0}}, jax="0.13"), tmp_path
    )
    (stored,) = runs.load(tmp_path)
    assert set(stored["pages"]) == {"book/status.ipynb"}


def test_the_table_puts_cases_first_and_marks_failures(tmp_path):
    pageruns.save(
        _record(
            {
                "notebooks/01-a.ipynb": {"passed": True, "seconds": 3.0},
                "book/lessons.ipynb": {"passed": False, "seconds": 4.0},
            }
        ),
        tmp_path,
    )
    table = runs.table(tmp_path).table()
    assert table.header[-2:] == ("01", "lessons")
    assert table.rows[0][-2:] == ("pass (3 s)", "FAIL (4 s)")


def test_the_stored_runs_name_device_and_versions():
    for run in runs.load():
        assert run["device"] and run["versions"]["jax"] and run["pages"]


def test_a_run_without_commits_says_which_pages_changed_after_its_date(tmp_path):
    """An older record (no commits): pages committed after its date are marked."""
    from casebook.status import runs

    old = {
        "device": "gpu: test",
        "date": "2000-01-01",
        "python": "3.12",
        "versions": {},
        "pages": {
            "notebooks/01-optax-828-zero-nans-multisteps.ipynb": {"passed": True, "seconds": 1}
        },
    }
    table = runs.RunsTable([old])
    assert table.changed_since(old) == list(old["pages"])
    assert "1 of 1 pages changed since" in table.freshness()
    today = {**old, "date": "2099-12-31"}
    assert runs.RunsTable([today]).changed_since(today) == []


def _cells(*indices):
    return [{"index": i, "seconds": 0.1, "error": "NameError: x"} for i in indices]


def _without_eras(page, seconds, failed, **version):
    """A stored run without eras of one ``page``: ``failed`` cell indices, and the page's
    ``commit`` and/or ``digest`` (``version``)."""
    got = {"passed": False, "seconds": seconds, "failed_cells": _cells(*failed), **version}
    return {**_record({page: got}), "eras": "withheld"}


def test_a_run_without_eras_passes_only_where_it_failed_on_era_cells_alone(tmp_path):
    """A GPU image cannot hold the era stacks: its run lists the cells that failed, and the
    table calls the page passed only if each is a cell the reference (the page without
    eras, on a machine where it passes with them, at the same commit) names. One more
    failing cell, or a reference of another commit, and it is a FAIL."""
    page = "notebooks/01-a.ipynb"
    ref = _without_eras(page, 9.0, (12, 13), commit="abc")
    gpu = _without_eras(page, 5.0, (12,), commit="abc")
    table = runs.RunsTable([gpu], [ref])
    assert table.verdict(gpu, page, gpu["pages"][page]) == "pass (5 s) except 1 era cells"
    worse = {**gpu["pages"][page], "failed_cells": _cells(12, 40)}
    assert table.verdict(gpu, page, worse) == "FAIL (5 s)"
    other = {**gpu["pages"][page], "commit": "def"}  # no digest: the commit decides
    assert table.verdict(gpu, page, other) == "unjudged (5 s): 1 cells failed without eras"
    with_eras = {**gpu, "eras": "run"}
    assert table.verdict(with_eras, page, gpu["pages"][page]) == "FAIL (5 s)"


def test_the_executor_lists_each_failing_cell_and_stops_at_the_first_without_allow(tmp_path):
    import nbformat

    from casebook.maintainer.tools import executor

    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(c) for c in ("x = 1", "1 / 0", "y", "x")]
    )
    path = tmp_path / "page.ipynb"
    nbformat.write(nb, path)
    strict = executor.execute(path)
    assert [c.index for c in strict.cells] == [0, 1] and not strict.passed
    assert strict.errors[0].error.startswith("ZeroDivisionError")
    loose = executor.execute(path, allow_errors=True)
    assert [(c.index, c.error.split(":")[0]) for c in loose.errors] == [
        (1, "ZeroDivisionError"),
        (2, "NameError"),
    ]
    assert loose.summary()["failed_cells"][1]["index"] == 2


def test_a_run_is_read_against_the_reference_of_the_same_file(tmp_path):
    """Where both records hold the page's digest, the digest decides, not the commit (a
    device's copy may carry an older git history)."""
    page = "notebooks/01-a.ipynb"
    ref = _without_eras(page, 9.0, (12,), commit="abc", digest="d1")
    gpu = _without_eras(page, 5.0, (12,), commit="old", digest="d1")
    got = gpu["pages"][page]
    table = runs.RunsTable([gpu], [ref])
    assert table.verdict(gpu, page, got) == "pass (5 s) except 1 era cells"
    assert table.verdict(gpu, page, {**got, "digest": "d2"}).startswith("unjudged")


def test_the_kernel_s_own_stderr_stays_out_of_the_command_s_output(tmp_path):
    """XLA's C++ logs write to the kernel's file descriptor 2: the executor, run in a
    process of its own as the Colab simulation and a machine's runs run it, keeps them in
    its folder (a passing page prints nothing), and shows their tail for a failing one; an
    interpreter that cannot start it reads as a failed run."""
    import nbformat

    from casebook.maintainer.tools import executor

    noisy = "import os; os.write(2, b'XLA SAYS HELLO\\n')"
    for cells, passes in (([noisy], True), ([noisy, "1 / 0"], False)):
        path = tmp_path / "page.ipynb"
        nbformat.write(
            nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]), path
        )
        summary, tail, seconds = executor.in_subprocess(path, tmp_path / f"out-{passes}.ipynb")
        assert summary["passed"] is passes and seconds > 0
        assert [c["index"] for c in summary["failed_cells"]] == ([] if passes else [1])
        assert ("XLA SAYS HELLO" in tail) is not passes, tail
    summary, _, _ = executor.in_subprocess(path, tmp_path / "never.ipynb", python="false")
    assert summary == {"passed": False, "seconds": 0.0, "failed_cells": []}


def test_every_stored_run_of_a_page_as_it_is_passes_or_fails_only_its_era_cells():
    """The board's verdict on each stored run of a page that has not changed since: "pass",
    or "pass except N era cells" for a run without eras; never a failure, and never
    "unjudged" (no reference without eras of that version of the page, so nothing says
    which of its failing cells need an era). Once every page has changed since the stored
    runs (no GPU lent since), nothing is left to judge here, and the board marks each run's
    pages as changed since; page 03's prose speaks of an earlier version's runs."""
    table = runs.RunsTable(runs.load(), runs.load(runs.WITHOUT_ERAS))
    verdicts = {
        (run["device"], page): table.verdict(run, page, got)
        for run in table.runs
        for page, got in run["pages"].items()
        if page not in table.changed_since(run)
    }
    not_passed = {k: v for k, v in verdicts.items() if not v.startswith("pass")}
    assert table.runs and not not_passed, not_passed


def test_a_profile_times_each_cell_from_nbclient_s_record_and_splits_off_server_starts(
    tmp_path, monkeypatch
):
    """``bench --profile``: a cell's seconds are nbclient's timestamps of its run, its kind
    comes from its code, and a server start the pool logs during a cell is split off it."""
    import nbformat

    from casebook.maintainer.tools import profile

    monkeypatch.setenv(profile.POOL_LOG_ENV, "")  # restored after the test
    start = (
        "import json, os, time\ntime.sleep(0.3)\n"
        "with open(os.environ['CASEBOOK_POOL_LOG'], 'a') as f:\n"
        "    f.write(json.dumps({'seconds': 0.2, 'at': time.time()}) + '\\n')\n"
        "time.sleep(0.3)"
    )
    cells = ["import time", "time.sleep(0.4)", start, "1 / 0"]
    path = tmp_path / "page.ipynb"
    nbformat.write(
        nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]), path
    )
    got = profile.profile_page(path)
    by_cell = {(c.index, c.kind): c.seconds for c in got.cells}
    assert set(by_cell) == {
        (0, "set-up and imports"),
        (1, "other"),
        (2, "release runs (server starts)"),
        (2, "other"),
        (3, "other"),
    }
    assert 0.4 <= by_cell[1, "other"] < 1.5
    assert by_cell[2, "release runs (server starts)"] == 0.2
    assert 0.4 <= by_cell[2, "other"] < 1.5  # 0.6 s of sleep, less the start
    assert got.by_kind()["kernel start"] > 0

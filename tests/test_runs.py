"""casebook.status.runs: stored page runs per machine, merged per day, shown as one table."""

from __future__ import annotations

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
    runs.save(_record({"notebooks/01-a.ipynb": {"passed": True, "seconds": 3.0}}), tmp_path)
    runs.save(_record({"book/lessons.ipynb": {"passed": False, "seconds": 4.0}}), tmp_path)
    (stored,) = runs.load(tmp_path)
    assert set(stored["pages"]) == {"notebooks/01-a.ipynb", "book/lessons.ipynb"}
    runs.save(
        _record({"book/status.ipynb": {"passed": True, "seconds": 1.0}}, jax="0.13"), tmp_path
    )
    (stored,) = runs.load(tmp_path)
    assert set(stored["pages"]) == {"book/status.ipynb"}


def test_the_table_puts_cases_first_and_marks_failures(tmp_path):
    runs.save(
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

"""casebook.status.board: the status board's triggers tell fixed, failing and silent apart."""

from __future__ import annotations

from dataclasses import replace

import pytest

from casebook.status import board

READS_PAGES = False

BY_KEY = {t.key: t for t in board.BOARD}


@pytest.fixture(scope="module")
def recorded() -> board.Board:
    """Every row as recorded with its trigger, none run: the status page
    (``book/status.ipynb``) runs the board, and asserts each row's status, each case's era
    and that every status occurs, in the test command as in the book's build."""
    rows = [board.Row(t, t.recorded, "as recorded") for t in board.BOARD]
    return board.Board(rows, "jax 0.12")


@pytest.mark.parametrize(
    "key, release", [("optax#828", "optax==0.1.9"), ("optax#1210", "optax==0.2.4")]
)
def test_the_fixed_triggers_fail_on_the_buggy_release(key, release):
    trigger = BY_KEY[key]
    outcome = board.releases.run(trigger.code, release, x64=trigger.x64)
    assert board._status(outcome)[0] == "still failing", outcome.summary


def test_a_trigger_without_a_status_is_unexpected_and_changes_show():
    odd = replace(BY_KEY["optax#828"], key="odd", code="result = 42", recorded="fixed")
    (row,) = board.run_board([odd], workers=1)
    assert row.status == "unexpected" and row.changed


def test_board_reads_as_text_and_html(recorded):
    text, page = str(recorded), recorded._repr_html_()
    assert "status on jax " in text and "sticky NaN" in text
    assert page.count("<tr>") == len(board.BOARD) + 1 and "01-optax-828" in page


def test_the_rows_found_by_the_book_s_check_are_marked(recorded):
    found = [r for r in recorded if r.trigger.found_by_check]
    assert {r.trigger.key for r in found} == {
        "monitor state",
        "DoG bf16",
        "inject dtype",
        "lars/muon masks",
        "mixed-dtype state",
        "scale_by_muon default",
        "GaLore None leaves",
        "SM3 scalar",
        "apply_if_finite dtype",
        "donated init state",
        "line search value dtype",
    }
    assert all(r.trigger.case == "book/check-findings" for r in found)
    assert str(recorded).count("[found by the book's check]") == len(found)
    assert recorded._repr_html_().count("found by the book's check") == len(found)


def test_the_found_triggers_report_fixed_when_the_bug_is_avoided():
    """Each found trigger can tell fixed from failing: with the user-side workaround
    written into it, it reports fixed."""
    dtype = BY_KEY["inject dtype"]
    masks = BY_KEY["lars/muon masks"]
    donated = BY_KEY["donated init state"]
    searched = BY_KEY["line search value dtype"]
    avoided = [
        replace(
            dtype,
            code=dtype.code.replace(
                "hyperparam_dtype=jnp.float32", "hyperparam_dtype=jnp.bfloat16"
            ),
        ),
        replace(
            masks,
            code=masks.code.replace(
                "optax.inject_hyperparams(factory)",
                'optax.inject_hyperparams(factory, static_args="weight_decay_mask")',
            ),
        ),
        replace(
            donated,
            code=donated.code.replace(
                "opt.init(params)", "jax.tree.map(jnp.copy, opt.init(params))"
            ),
        ),
        replace(  # jax.value_and_grad instead of the stored value and grad
            searched,
            code=searched.code.replace(
                "optax.value_and_grad_from_state(loss)(params, state=lbfgs.init(params))",
                "jax.value_and_grad(loss)(params)",
            ).replace("store_grad=True", "store_grad=False"),
        ),
    ]
    assert [r.status for r in board.run_board(avoided)] == ["fixed"] * 4


def test_the_board_fails_on_a_changed_row_and_names_it():
    """The status page asserts its rows (``Board.check``), not only this test."""
    trigger = board.BOARD[0]
    era = ("era:optax-828", "still failing", "TypeError: ...")
    same = board.Board([board.Row(trigger, trigger.recorded, "as recorded", era)], "jax 0.12")
    assert same.check() is same
    flipped = "silent" if trigger.recorded != "silent" else "fixed"
    changed = board.Board([board.Row(trigger, flipped, "now different", era)], "jax 0.12")
    with pytest.raises(
        AssertionError, match=rf"(?s)board changed on jax 0\.12.*{trigger.key}: recorded"
    ):
        changed.check()
    era_fixed = board.Board(
        [board.Row(trigger, trigger.recorded, "x", ("era:optax-828", "fixed", "runs"))], "jax"
    )
    with pytest.raises(AssertionError, match="no longer fails in era:optax-828"):
        era_fixed.check()


def test_a_changed_row_is_named_in_an_installed_package_too(monkeypatch):
    """The status page in Colab runs the installed package, which has no lock file: the
    message says so instead of failing to read it."""
    monkeypatch.setattr(board.releases, "running_from_checkout", lambda: False)

    def no_lock(names=None):
        raise FileNotFoundError("requirements.txt")  # as in a wheel: no lock file

    monkeypatch.setattr(board.lock, "locked_versions", no_lock)
    trigger = board.BOARD[0]
    flipped = "silent" if trigger.recorded != "silent" else "fixed"
    changed = board.Board([board.Row(trigger, flipped, "now different", None)], "jax 0.12")
    with pytest.raises(AssertionError, match=r"lock: no lock at hand.*\n  optax#828: recorded"):
        changed.check()

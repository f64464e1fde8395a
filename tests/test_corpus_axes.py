"""The survey's axes beyond the oracle (``casebook/maintainer/corpus/_axes.py``, issue 33 item 7): each
finds what it is for on a set-up that has it, and nothing on one that has not."""

from __future__ import annotations

from casebook.maintainer.corpus import _axes

READS_PAGES = False


def test_a_donated_init_state_that_holds_the_params_fails_the_first_step():
    rows = {
        r.name: r.problem
        for r in _axes.donated_state(["adam", "scale_by_distance_over_gradients", "scale_by_cocob"])
    }
    assert rows["adam"] == ""
    assert "previously donated" in rows["scale_by_distance_over_gradients"]
    assert "donate the same buffer twice" in rows["scale_by_cocob"]


def test_an_eager_loop_is_clean_where_it_is():
    assert [r.problem for r in _axes.live_buffers(["adam"], steps=12)] == [""]


def test_the_value_dtype_axis_finds_finding_11_and_judges_the_check():
    """A deterministic subset of the axis (the full grid, 1,001 set-ups run eagerly and in a
    scan, is ``python -m casebook.maintainer.corpus --axes``): f32 and bf16, x64 off."""
    names = ["scale_by_backtracking_linesearch-store_grad", "lbfgs"]
    rows = _axes.value_dtype(names, dtypes=("f32", "bf16"), x64=(False,))
    assert len(rows) == 2 * 8 * 2  # dtype triples, eager and scan
    got = {(r.name, r.setting): r for r in rows}
    store = got[
        "scale_by_backtracking_linesearch-store_grad", "f32 params, f32 value, f32 grads, eager"
    ]
    assert store.problem == "" and store.alarm == ""
    store = got[
        "scale_by_backtracking_linesearch-store_grad", "bf16 params, bf16 value, bf16 grads, eager"
    ]
    assert "cotangent type does not match function output" in store.problem and store.alarm
    helper = got["lbfgs", "bf16 params, f32 value, bf16 grads, scan"]  # value_and_grad_from_state
    assert "cond branches must have equal output types" in helper.problem and helper.alarm == ""
    assert not any(r.alarm and not r.problem for r in rows if r.setting.endswith("scan"))


def test_the_corpus_command_runs_the_axes(capsys):
    from casebook.maintainer import corpus

    assert corpus.main(["--axes", "-k", "scale_by_distance_over_gradients"]) == 1
    out = capsys.readouterr().out
    assert "donated state" in out and "with a problem" in out

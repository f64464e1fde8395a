"""The survey's axes beyond the oracle (``casebook/corpus/_axes.py``, issue 33 item 7): each
finds what it is for on a set-up that has it, and nothing on one that has not."""

from __future__ import annotations

from casebook.corpus import _axes


def test_a_donated_init_state_that_holds_the_params_fails_the_first_step():
    rows = {
        r.name: r.problem
        for r in _axes.donated_state(["adam", "scale_by_distance_over_gradients", "scale_by_cocob"])
    }
    assert rows["adam"] == ""
    assert "previously donated" in rows["scale_by_distance_over_gradients"]
    assert "donate the same buffer twice" in rows["scale_by_cocob"]


def test_a_loss_in_another_dtype_and_an_eager_loop_are_clean_where_they_are():
    assert all(r.problem == "" for r in _axes.value_dtype(["momo_adam", "lbfgs"]))
    assert len(_axes.value_dtype(["momo_adam"])) == len(_axes.VALUE_PAIRS)
    assert _axes.value_dtype(["adam"]) == []  # adam takes no value
    assert [r.problem for r in _axes.live_buffers(["adam"], steps=12)] == [""]


def test_the_corpus_command_runs_the_axes(capsys):
    from casebook import corpus

    assert corpus.main(["--axes", "-k", "scale_by_distance_over_gradients"]) == 1
    out = capsys.readouterr().out
    assert "donated state" in out and "with a problem" in out

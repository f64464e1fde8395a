"""casebook.corpus: the oracle tells working set-ups from broken ones, and the check agrees
with it on the representative part of the corpus (the whole corpus: the corpus command)."""

from __future__ import annotations

import jax.numpy as jnp
import optax
import pytest

from casebook import corpus
from casebook.corpus._setups import Built

SET_UPS = {s.name: s for s in corpus.representative_set_ups()}


@pytest.mark.parametrize("name", sorted(SET_UPS))
def test_the_check_agrees_with_the_oracle(name):
    verdict = corpus.judge(SET_UPS[name])
    assert not verdict.false_alarm, verdict
    assert not verdict.miss, verdict


def test_the_representative_part_has_working_and_broken_set_ups():
    names = {"docs/lookahead", "docs/optax-monitor-docstring", "callable/lars-weight_decay_mask"}
    failures = {n: corpus.oracle(SET_UPS[n].make()) for n in names}
    assert failures["docs/lookahead"] is None
    assert failures["docs/optax-monitor-docstring"].startswith("state changes in real update 1")
    assert failures["callable/lars-weight_decay_mask"].startswith("silent")


def test_the_oracle_sees_a_crash_a_scan_refusal_and_a_late_retype():
    params = {"w": jnp.ones(2)}
    assert corpus.oracle(Built(optax.adam(1e-2), params, params)) is None
    assert corpus.oracle(Built(optax.lbfgs(), params, params)).startswith("TypeError")
    assert "switch branches must have equal output types" in corpus.oracle(
        SET_UPS["drift/switch"].make()
    )


def test_an_old_check_is_judged_too(tmp_path):
    """The command can judge another check (how the before/after figures were taken)."""
    old = tmp_path / "old_check.py"
    old.write_text(
        "class R(list):\n    problems = []\ndef check_optimizer(*args, **kwargs):\n    return R()\n"
    )
    verdict = corpus.judge(
        SET_UPS["docs/optax-monitor-docstring"], corpus._load_check(str(old)), new_api=False
    )
    assert verdict.miss


def test_the_command_prints_the_figures(capsys):
    assert corpus.main(["--representative", "-k", "drift/switch"]) == 0
    out = capsys.readouterr().out
    assert "false alarms: 0" in out and "misses: 0" in out and "median" in out and "p99" in out


def test_the_command_rejects_a_filter_that_matches_nothing():
    with pytest.raises(SystemExit):
        corpus.main(["-k", "no such set-up"])

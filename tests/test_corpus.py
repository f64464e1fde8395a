"""casebook.maintainer.corpus: the oracle tells working set-ups from broken ones, and the check agrees
with it on the representative part of the corpus (the whole corpus: the corpus command)."""

from __future__ import annotations

import runpy
import sys

import jax.numpy as jnp
import optax
import pytest

from casebook.maintainer import corpus
from casebook.maintainer.corpus import _wide
from casebook.maintainer.corpus._setups import Built

READS_PAGES = False

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


def test_a_check_that_raises_without_a_message_is_an_alarm():
    """An exception with no message is an alarm like any other, not an IndexError."""

    def refuses(*args, **kwargs):
        raise ValueError()

    verdict = corpus.judge(SET_UPS["docs/optax-monitor-docstring"], refuses)
    assert verdict.alarm == "raised ValueError: "


def test_the_command_prints_the_figures(capsys):
    assert corpus.main(["--representative", "-k", "drift/switch"]) == 0
    out = capsys.readouterr().out
    assert "false alarms: 0" in out and "misses: 0" in out and "median" in out and "p99" in out


def test_the_command_rejects_a_filter_that_matches_nothing():
    with pytest.raises(SystemExit):
        corpus.main(["-k", "no such set-up"])


# optax's deprecated names (optimistic_adam, inject_stateful_hyperparams) are surveyed too
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_the_wide_survey_builds_every_public_transformation_of_optax():
    """Every public name of optax, optax.transforms and optax.contrib that returns a
    GradientTransformation is surveyed (or named in NOT_SURVEYED with its reason)."""
    public = _wide.public_factories()
    assert {"adam", "lbfgs", "scale_by_zoom_linesearch", "muon", "galore", "sm3"} <= public
    missing = {n for n in public if _wide.surveyed_name(n) not in (None, *_wide.FACTORIES)}
    assert not missing
    for name, factory in _wide.FACTORIES.items():
        built = _wide._build(factory, "dict", "f32")
        assert callable(built.optimizer.init) and callable(built.optimizer.update), name


def test_the_wide_survey_covers_the_new_kinds_of_tree():
    names = {s.name: s for s in corpus.all_set_ups(wide=True)}
    grid = {f"{n}/{k}/{p}" for n in _wide.FACTORIES for k, p, _ in _wide.WIDE_KINDS}
    assert grid <= set(names) and len(grid) == len(_wide.FACTORIES) * len(_wide.WIDE_KINDS)
    for kind in (
        "dict/f32+bf16",
        "dict/f32+f16",
        "dict/f32-grads-bf16",
        "scalar/f32",
        "none/f32",
        "tensor/f32",
        "vector/f32",
    ):
        assert f"muon/{kind}" in names and f"lbfgs/{kind}" in names
    assert names["adam/dict/f32+f64"].x64 and not names["adam/dict/f32+bf16"].x64
    mixed = names["adam/dict/f32+bf16"].make()
    assert {str(x.dtype) for x in mixed.params.values()} == {"float32", "bfloat16"}
    other = names["adam/dict/f32-grads-bf16"].make()
    assert {str(g.dtype) for g in other.grads.values()} == {"bfloat16"}
    assert names["adam/none/f32"].make().params["b"] is None
    assert names["adam/scalar/f32"].make().params["s"].ndim == 0


def test_the_default_corpus_has_a_share_of_the_new_kinds_and_the_wide_survey_the_rest():
    default = {s.name for s in corpus.all_set_ups()}
    wide = {s.name for s in corpus.all_set_ups(wide=True)}
    assert default < wide
    assert "prodigy/dict/f32+bf16" in default and "dog/dict/f32+bf16" in wide - default


def test_python_m_casebook_corpus_runs_the_command(monkeypatch, capsys):
    argv = ["casebook.maintainer.corpus", "--wide", "--representative", "-k", "sm3/scalar"]
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit) as done:
        runpy.run_module("casebook.maintainer.corpus", run_name="__main__")
    assert done.value.code == 0
    assert "1 set-ups: 1 fail for real" in capsys.readouterr().out

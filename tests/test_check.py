"""casebook.check: each family of defect on a synthetic optimizer, and no false alarms."""

from __future__ import annotations

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import optax
import pytest
from jax.lax import cond as imported_cond

from casebook import cases, releases
from casebook.check import (
    MAX_EXPLICIT_STEPS,
    MAX_STEPS,
    CheckReport,
    OptimizerCheckError,
    check_optimizer,
)

READS_PAGES = False

PARAMS = {"w": jnp.ones((3, 2)), "b": jnp.zeros(2)}


def _transform(init, update):
    return optax.GradientTransformation(init, update)


def _families(report: CheckReport) -> set[str]:
    return report.families()


# ---------------------------------------------------------------- drift: state drift


def test_dtype_drift_of_a_state_leaf_is_an_error_with_its_path():
    opt = _transform(
        lambda p: {"count": jnp.zeros([], jnp.int32)},
        lambda g, s, p=None: (g, {"count": (s["count"] + 1).astype(jnp.int16)}),
    )
    report = check_optimizer(opt, PARAMS)
    assert not report.ok and _families(report) == {"state drift"}
    (finding,) = report.errors
    assert finding.where == "state['count']" and "dtype i32[] -> i16[]" in finding.what


def test_shape_and_structure_drift():
    grow = _transform(lambda p: jnp.zeros(1), lambda g, s, p=None: (g, jnp.zeros(s.shape[0] + 1)))
    assert "shape" in check_optimizer(grow, PARAMS).errors[0].what
    reshape = _transform(lambda p: (jnp.zeros(()),), lambda g, s, p=None: (g, {"a": s[0]}))
    assert "structure" in check_optimizer(reshape, PARAMS).errors[0].what


def test_weak_type_change_alone_is_only_a_note():
    opt = _transform(lambda p: jnp.asarray(0.0), lambda g, s, p=None: (g, s + jnp.float32(1)))
    report = check_optimizer(opt, PARAMS)
    assert report.ok and report[0].severity == "note" and "weak_type" in report[0].what


def test_cond_branches_with_different_dtypes_are_found_before_cond_raises():
    def update(g, s, p=None):
        new = jax.lax.cond(s["flag"], lambda s: s, lambda s: {"flag": 1 - s["flag"]}, s)
        return g, new

    opt = _transform(lambda p: {"flag": jnp.array(True)}, update)
    report = check_optimizer(opt, PARAMS)
    assert [f.family for f in report.errors] == ["state drift", "crash"]
    assert "dtype: bool[] in <lambda>, i32[] weak in <lambda>" in report.errors[0].what
    assert report.errors[0].where.endswith("output['flag']")


# ------------------------------------------------------- leaf: non-array leaves


class Model(eqx.Module):
    w: jax.Array
    activation: object = jax.nn.relu


def test_non_array_leaf_touched_by_update_is_an_error_naming_the_leaf():
    model = Model(jnp.ones(3))
    reads_params = optax.MultiSteps(optax.adam(1e-3), every_k_schedule=2)
    report = check_optimizer(reads_params, model, init_params=eqx.filter(model, eqx.is_array))
    (finding,) = report.errors
    assert finding.family == "non-array leaf" and "params.activation" in finding.where
    assert "update touches them" in finding.what and "not a valid JAX type" in finding.what


def test_non_array_leaf_touched_by_init_is_an_error():
    report = check_optimizer(optax.adam(1e-3), Model(jnp.ones(3)))
    assert [f.what.split(":")[0] for f in report.errors] == ["init touches them"]


def test_non_array_leaf_that_optax_never_reads_is_a_note():
    model = Model(jnp.ones(3))
    report = check_optimizer(optax.adam(1e-3), model, init_params=eqx.filter(model, eqx.is_array))
    assert report.ok and [f.severity for f in report] == ["note"]


# -------------------------------------------------- callable: callable hyperparameters


class Mask(eqx.Module):
    w: bool
    b: bool

    def __call__(self, x, y):
        return x


def test_callable_pytree_under_inject_hyperparams_is_an_error():
    opt = optax.inject_hyperparams(optax.adamw)(1e-3, mask=Mask(True, False))
    report = check_optimizer(opt, Mask(jnp.ones(2), jnp.zeros(2)))
    assert report.errors[0].family == "callable hyperparameter"
    assert 'static_args="mask"' in report.errors[0].why


def test_mask_function_called_with_the_step_count_is_an_error():
    opt = optax.inject_hyperparams(optax.adamw)(
        1e-3, mask=lambda p: jax.tree.map(lambda x: x.ndim > 1, p)
    )
    (finding,) = check_optimizer(opt, PARAMS).errors
    assert finding.family == "callable hyperparameter" and "returns bool[]" in finding.what


# ------------------------------------------------------------------- no false alarms


def _lbfgs_problem():
    f = lambda x: jnp.sum((1 - x[:-1]) ** 2 + 100 * (x[1:] - x[:-1] ** 2) ** 2)
    x = jnp.zeros(4)
    value, grad = jax.value_and_grad(f)(x)
    return x, grad, {"value": value, "grad": grad, "value_fn": f}


@pytest.mark.parametrize(
    "name", ["adam", "adamw-tree-mask", "inject-static-args", "multisteps", "lbfgs-x64"]
)
def test_correct_set_ups_raise_no_alarm(name):
    model = Model(jnp.ones(3))
    if name == "adam":
        report = check_optimizer(optax.adam(1e-3), PARAMS)
    elif name == "adamw-tree-mask":
        report = check_optimizer(optax.adamw(1e-3, mask={"w": True, "b": False}), PARAMS)
    elif name == "inject-static-args":
        opt = optax.inject_hyperparams(optax.adamw, static_args="mask")(
            1e-3, mask=Mask(True, False)
        )
        report = check_optimizer(opt, Mask(jnp.ones(2), jnp.zeros(2)))
    elif name == "multisteps":
        report = check_optimizer(
            optax.MultiSteps(optax.adam(1e-3), 2), eqx.filter(model, eqx.is_array)
        )
    else:
        with jax.enable_x64(True):
            x, grad, kwargs = _lbfgs_problem()
            report = check_optimizer(optax.lbfgs(), x, grad, update_kwargs=kwargs)
    assert report.ok, str(report)


# ---------------------------------------------------------------------------- bad input


def test_not_an_optimizer_is_a_clear_type_error():
    with pytest.raises(TypeError, match="needs an optax GradientTransformation.*got function"):
        check_optimizer(optax.adam, PARAMS)


def test_grads_that_do_not_match_params_are_a_clear_value_error():
    with pytest.raises(ValueError, match="grads do not match params"):
        check_optimizer(optax.adam(1e-3), PARAMS, grads={"w": jnp.ones((3, 2))})


def test_a_failing_update_is_a_finding_and_strict_raises_a_clear_error():
    def update(g, s, p=None):
        raise RuntimeError("boom\nsecond line")

    opt = _transform(lambda p: (), update)
    report = check_optimizer(opt, PARAMS)
    assert [(f.family, f.what) for f in report] == [("crash", "RuntimeError: boom")]
    with pytest.raises(OptimizerCheckError, match="crash: update, step 1: RuntimeError: boom"):
        check_optimizer(opt, PARAMS, strict=True)


def test_report_reads_as_text_and_html():
    report = check_optimizer(optax.adam(1e-3), PARAMS)
    assert str(report).endswith("nothing found") and "<p>" in report._repr_html_()
    assert report.raise_if_problems() is report


class Controller(eqx.Module):
    rtol: float
    norm: object


def test_python_numbers_next_to_a_function_are_not_blamed():
    model = {"w": jnp.ones(2), "controller": Controller(1e-3, jax.nn.relu)}
    opt = optax.MultiSteps(optax.adam(1e-3), every_k_schedule=2)
    report = check_optimizer(opt, model, init_params=eqx.filter(model, eqx.is_array))
    (error,) = report.errors
    assert error.where.startswith("params['controller'].norm = ") and "rtol" not in error.where
    assert "1 Python number leaf" in str(report)


# ------------------------------------ no false alarms on set-ups from real projects


def test_lookahead_params_get_grads_of_the_fast_params():
    opt = optax.lookahead(optax.adam(1e-3), sync_period=2, slow_step_size=0.5)
    params = optax.LookaheadParams.init_synced(PARAMS)
    assert check_optimizer(opt, params).ok
    assert check_optimizer(opt, params, PARAMS).ok


class Buffers(eqx.Module):
    w: jax.Array
    position: jax.Array
    key: jax.Array
    flag: jax.Array


BUFFERS = Buffers(jnp.ones(3), jnp.arange(3), jax.random.key(0), jnp.array([True, False]))


def test_grads_default_to_none_at_int_bool_and_key_leaves():
    trained = eqx.filter(BUFFERS, eqx.is_inexact_array)
    assert check_optimizer(optax.adam(1e-3), BUFFERS, init_params=trained).ok
    grads = eqx.filter_grad(lambda m: jnp.sum(m.w**2))(BUFFERS)
    assert check_optimizer(optax.adamw(1e-3), BUFFERS, grads, init_params=trained).ok


def test_none_grads_for_a_frozen_float_layer_are_accepted():
    params = {"frozen": jnp.ones((2, 2)), "head": jnp.ones(2)}
    grads = {"frozen": None, "head": jnp.ones(2)}
    report = check_optimizer(
        optax.adam(1e-3),
        params,
        grads,
        init_params={"frozen": None, "head": params["head"]},
        update_params=False,
    )
    assert report.ok, str(report)


def test_state_that_init_built_for_leaves_without_grads_blames_init():
    report = check_optimizer(optax.adam(1e-3), BUFFERS)
    (error,) = report.errors
    assert error.family == "non-array leaf" and "params.position = i32[3]" in error.where
    assert error.what.startswith("init built optimizer state") and "is_inexact_array" in error.why


class Decay(eqx.Module):
    rate: jax.Array

    def __call__(self, count):
        return self.rate / (1 + count)


@pytest.mark.parametrize(
    "schedule",
    [
        Decay(jnp.array(1e-3)),
        jax.tree_util.Partial(lambda r, c: r / (1 + c), 1e-3),
        optax.cosine_decay_schedule(1e-3, 100),
    ],
)
def test_a_callable_pytree_that_returns_a_number_is_a_fine_schedule(schedule):
    assert check_optimizer(optax.inject_hyperparams(optax.adam)(schedule), PARAMS).ok


# ----------------------------------------- no misses on set-ups built to have a bug


def _by_ndim(p):
    return jax.tree.map(lambda x: x.ndim > 1, p)


def _int_by_ndim(p):  # an int mask: for a step count it returns the number 0
    return jax.tree.map(lambda x: x.ndim // 2, p)


def _dimension_numbers(p):
    dims = optax.contrib.MuonDimensionNumbers()
    return jax.tree.map(lambda x: dims if x.ndim == 2 else None, p)


@pytest.mark.parametrize(
    "factory, name, fn",
    [
        (optax.lars, "weight_decay_mask", _by_ndim),
        (optax.lars, "trust_ratio_mask", _by_ndim),
        (optax.lars, "weight_decay_mask", _int_by_ndim),
        (optax.contrib.muon, "weight_decay_mask", _by_ndim),
        (optax.contrib.muon, "muon_weight_dimension_numbers", _dimension_numbers),
    ],
)
def test_every_tree_hyperparameter_under_inject_hyperparams_is_found(factory, name, fn):
    params = {"w": jnp.ones((3, 3)), "b": jnp.ones(3)}
    (error,) = check_optimizer(optax.inject_hyperparams(factory)(1.0, **{name: fn}), params).errors
    assert error.family == "callable hyperparameter" and f'static_args="{name}"' in error.why
    static = optax.inject_hyperparams(factory, static_args=name)(1.0, **{name: fn})
    assert check_optimizer(static, params).ok


def test_a_callable_returning_a_tree_where_a_number_is_expected_is_found():
    opt = optax.inject_hyperparams(optax.adam)(lambda c: {"lr": 1e-3})
    error = check_optimizer(opt, PARAMS).errors[0]
    assert "returns a tree where a schedule's number is expected" in error.what


def test_a_dtype_under_inject_hyperparams_is_not_taken_for_a_schedule():
    bf16 = jax.tree.map(lambda x: x.astype(jnp.bfloat16), PARAMS)
    opt = optax.inject_hyperparams(optax.adamw)(1e-3, mu_dtype=jnp.bfloat16)
    error = check_optimizer(opt, bf16).errors[0]
    assert error.where == "inject_hyperparams(mu_dtype=...)" and "is a type" in error.what
    assert check_optimizer(
        optax.inject_hyperparams(optax.adamw)(1e-3, mu_dtype="bfloat16"), bf16
    ).ok


class Labels(eqx.Module):
    w: str
    b: str

    def __call__(self, x):
        return x


def test_a_callable_label_tree_of_multi_transform_is_family_3():
    opt = optax.multi_transform({"a": optax.adam(1e-3), "s": optax.sgd(1e-3)}, Labels("a", "s"))
    report = check_optimizer(opt, Labels(jnp.ones(3), jnp.ones(3)))
    assert report.errors[0].family == "callable hyperparameter"
    assert "param_labels=lambda params: labels" in report.errors[0].why
    fixed = optax.multi_transform(
        {"a": optax.adam(1e-3), "s": optax.sgd(1e-3)}, lambda p: Labels("a", "s")
    )
    assert check_optimizer(fixed, Labels(jnp.ones(3), jnp.ones(3))).ok


def test_mixed_precision_grads_find_the_drift_and_default_grads_say_so():
    bf16 = jax.tree.map(lambda x: x.astype(jnp.bfloat16), PARAMS)
    default = check_optimizer(optax.adam(1e-3), bf16)
    assert default.ok and "grads_dtype=jnp.float32" in default[-1].what
    mixed = check_optimizer(optax.adam(1e-3), bf16, grads_dtype=jnp.float32)
    assert {f.where for f in mixed.errors} == {"state[0].mu['w']", "state[0].mu['b']"}
    assert not check_optimizer(optax.adam(1e-3), bf16, PARAMS).ok


def _counter(update):
    return _transform(lambda p: {"c": jnp.zeros((), jnp.int32)}, update)


def test_update_without_params_is_checked_when_asked():
    opt = _counter(lambda g, s, p=None: (g, {"c": s["c"] + (1 if p is not None else 1.5)}))
    assert check_optimizer(opt, PARAMS).ok
    (error,) = check_optimizer(opt, PARAMS, update_params=False).errors
    assert "without params" in error.what and "i32[] -> f32[] weak" in error.what
    assert len(check_optimizer(opt, PARAMS, update_params="both").errors) == 1


def test_a_failure_without_params_is_only_a_note_in_both_mode():
    report = check_optimizer(optax.adamw(1e-3, weight_decay=0.1), PARAMS, update_params="both")
    assert report.ok and any(f.where.startswith("update without params") for f in report)


def _late(g, s, p=None):  # a loses its weak type in step 1, b in step 2, c turns int32 in step 3
    return g, {"a": s["a"] + jnp.int32(1), "b": s["b"] + s["a"], "c": s["c"] + s["b"]}


LATE = _transform(
    lambda p: {"a": jnp.asarray(0), "b": jnp.asarray(0), "c": jnp.zeros((), jnp.int16)}, _late
)


def test_a_drift_that_first_shows_at_step_3_is_found_by_stepping_to_a_fixed_point():
    report = check_optimizer(LATE, PARAMS)
    (error,) = report.errors
    assert error.where == "state['c']" and error.what == "step 3: dtype i16[] -> i32[]"
    assert report.steps == 4
    assert check_optimizer(LATE, PARAMS, steps=2).ok


def test_a_state_whose_types_never_settle_is_a_warning():
    grow = _transform(lambda p: jnp.zeros(1), lambda g, s, p=None: (g, jnp.zeros(s.shape[0] + 1)))
    report = check_optimizer(grow, PARAMS)
    assert report.steps == MAX_STEPS and report.problems[-1].severity == "warning"
    assert "still change after 16 steps" in report.problems[-1].what


def _switch(g, s, p=None):
    return g, jax.lax.switch(0, [lambda s: s, lambda s: {"c": s["c"].astype(jnp.int16)}], s)


def _imported_cond(g, s, p=None):
    return g, imported_cond(True, lambda s: s, lambda s: {"c": s["c"].astype(jnp.int16)}, s)


@pytest.mark.parametrize(
    "update, where",
    [(_switch, "lax.switch branch output['c']"), (_imported_cond, "lax.cond branch output['c']")],
)
def test_switch_and_an_imported_cond_name_the_leaf(update, where):
    report = check_optimizer(_counter(update), PARAMS)
    assert report.errors[0].where == where and "int32[] in " in report.errors[0].what
    assert "int16[] in " in report.errors[0].what and report.errors[1].family == "crash"


# -------------------------------------------------- more bad input: clear errors


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(steps="2"), TypeError, "steps must be an int"),
        (dict(steps=True), TypeError, "steps must be an int"),
        (dict(update_kwargs="value"), TypeError, "update_kwargs must be a mapping"),
        (dict(update_params="yes"), ValueError, "update_params must be True, False or"),
    ],
)
def test_bad_options_are_clear_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        check_optimizer(optax.adam(1e-3), PARAMS, **kwargs)


def test_a_transformation_class_is_a_clear_type_error():
    with pytest.raises(TypeError, match="got the class MultiSteps itself: create one first"):
        check_optimizer(optax.MultiSteps, PARAMS)


def test_int_only_params_with_default_grads_are_a_clear_value_error():
    with pytest.raises(ValueError, match="no floating-point array leaf"):
        check_optimizer(optax.adam(1e-3), {"n": jnp.arange(3)})


# ------------------------------------- any input: a report, or an error that says the fix


@pytest.mark.parametrize("params", [None, {}, [], ()])
def test_an_empty_tree_is_checked_with_a_note(params):
    clip = optax.inject_hyperparams(optax.clip_by_global_norm)(max_norm=1.0)
    for opt in (clip, optax.chain(clip, optax.adam(1e-3))):
        report = check_optimizer(opt, params)
        assert report.ok and "an empty tree" in report[-1].what, str(report)
    assert check_optimizer(optax.adam(1e-3), params, params).ok


def test_empty_grads_for_params_with_leaves_say_what_to_pass():
    with pytest.raises(ValueError, match=r"grads do not match params.*or grads=None for zeros"):
        check_optimizer(optax.adam(1e-3), PARAMS, grads={})


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(grads_dtype=jnp.int32), TypeError, "grads_dtype=int32 is not a floating-point"),
        (dict(grads_dtype="f32"), TypeError, r"grads_dtype='f32' is not a dtype.*jnp\.float32"),
        (dict(grads_dtype=jnp.ones(2)), TypeError, "grads_dtype must be a dtype, got an array"),
        (dict(grads_dtype=jnp.float64), ValueError, "grads_dtype=float64 needs 64-bit types"),
        (dict(grads=PARAMS, grads_dtype="bfloat16"), ValueError, "grads and grads_dtype were"),
        (dict(steps=10**6), ValueError, r"steps=1000000 is more than MAX_EXPLICIT_STEPS \(64\)"),
        (dict(steps=0), ValueError, "steps must be at least 1"),
        (dict(steps=2.0), TypeError, "steps must be an int"),
        (dict(strict="yes"), TypeError, "strict must be True"),
        (dict(update_kwargs={1: 2}), TypeError, r"update_kwargs must be a mapping.*\(str keys\)"),
    ],
)
def test_bad_arguments_name_the_argument_and_the_fix(kwargs, error, match):
    with pytest.raises(error, match=f"^check_optimizer: .*{match}"):
        check_optimizer(optax.adam(1e-3), PARAMS, **kwargs)


def test_good_grads_dtypes_are_taken_by_name_or_type():
    for dtype in (jnp.float32, "float32", jnp.bfloat16, "bfloat16", jnp.float16):
        assert check_optimizer(optax.sgd(0.1), PARAMS, grads_dtype=dtype).ok
    with jax.enable_x64(True):
        assert check_optimizer(optax.sgd(0.1), PARAMS, grads_dtype=jnp.float64).ok


def test_explicit_steps_up_to_the_cap_are_traced():
    assert check_optimizer(LATE, PARAMS, steps=MAX_EXPLICIT_STEPS).steps == MAX_EXPLICIT_STEPS


@pytest.mark.parametrize(
    "params, found",
    [
        ({"name": "abc"}, "found params['name'] = str 'abc'"),
        ({"n": jnp.arange(3), "f": jax.nn.relu}, "params['f'] = custom_jvp"),
        ({"n": jnp.arange(3)}, "found params['n'] = i32[3]"),
    ],
)
def test_params_without_a_float_leaf_list_what_was_found(params, found):
    with pytest.raises(ValueError, match="no floating-point array leaf") as raised:
        check_optimizer(optax.adam(1e-3), params)
    assert found in str(raised.value) and "grads= as your code computes them" in str(raised.value)
    grads = jax.tree.map(lambda _: None, params)
    assert isinstance(check_optimizer(optax.sgd(0.1), params, grads), CheckReport)


def test_a_string_next_to_the_arrays_is_named_with_the_fix():
    (error,) = check_optimizer(optax.adam(1e-3), {"name": "mlp", "w": jnp.ones(2)}).errors
    assert error.where == "params['name'] = str 'mlp'" and "eqx.is_inexact_array" in error.why


@dataclasses.dataclass(frozen=True)
class FixedMask:
    w: bool = True
    b: bool = False

    def __call__(self, params):
        return {"w": self.w, "b": self.b}


def _runs(opt, params, grads=None, steps=2):
    """Whether the optimizer really runs: init, then jitted updates."""
    grads = jax.tree.map(jnp.ones_like, params) if grads is None else grads
    state, update = opt.init(params), jax.jit(opt.update)
    for _ in range(steps):
        _, state = update(grads, state, params)
    return True


@pytest.mark.parametrize(
    "make",
    [
        lambda m: optax.adamw(1e-3, mask=m),
        lambda m: optax.masked(optax.adam(1e-3), m),
        lambda m: optax.add_decayed_weights(0.1, mask=m),
        lambda m: optax.inject_hyperparams(optax.adamw)(1e-3, mask=m),
        lambda m: optax.inject_hyperparams(optax.add_decayed_weights)(0.1, mask=m),
        lambda m: optax.inject_hyperparams(optax.adamw, static_args="mask")(1e-3, mask=m),
    ],
)
def test_a_dataclass_mask_that_returns_a_fixed_tree_works_and_is_not_flagged(make):
    opt = make(FixedMask())
    assert _runs(opt, PARAMS)
    report = check_optimizer(opt, PARAMS)
    assert report.ok, str(report)
    notes = [f.what for f in report if f.family == "callable hyperparameter"]
    assert all("returns the same tree" in n for n in notes)


class ModuleLabels(eqx.Module):
    w: str
    b: str

    def __call__(self, params):
        return {"w": self.w, "b": self.b}


def test_a_callable_label_tree_that_returns_labels_is_not_flagged():
    opt = optax.multi_transform(
        {"a": optax.adam(1e-3), "s": optax.sgd(1e-3)}, ModuleLabels("a", "s")
    )
    assert _runs(opt, PARAMS) and check_optimizer(opt, PARAMS).ok


def test_mixed_precision_grads_are_checked_as_given_with_a_note():
    bf16 = jax.tree.map(lambda x: x.astype(jnp.bfloat16), PARAMS)
    report = check_optimizer(optax.adam(1e-3), PARAMS, bf16)
    assert report.ok and "mixed precision: bfloat16 grads for float32 params (2 leaves)" in str(
        report
    )
    # a bf16 compute copy given to update, the float32 master weights to init
    assert check_optimizer(optax.adam(1e-3), bf16, bf16, init_params=PARAMS).ok
    # inject_hyperparams casts max_norm to the params' float32, clip's select then refuses
    clip = optax.inject_hyperparams(optax.clip_by_global_norm)(max_norm=1.0)
    (error,) = check_optimizer(clip, PARAMS, bf16).errors
    assert "lax.select requires arguments to have the same dtypes" in error.what
    with pytest.raises(TypeError, match="lax.select requires"):
        _runs(clip, PARAMS, bf16)


def _sign(updates, state):  # an update that takes no params argument
    return jax.tree.map(jnp.sign, updates), state


def test_an_update_without_a_params_argument_is_checked_without_params():
    opt = optax.GradientTransformation(optax.init_empty_state, _sign)
    for how in (True, "both", False, None):
        report = check_optimizer(opt, PARAMS, update_params=how)
        assert report.ok, str(report)
    assert "update takes no params argument" in str(check_optimizer(opt, PARAMS))
    counter = _counter(lambda g, s, p=None: (g, {"c": s["c"] + (1 if p is not None else 1.5)}))
    assert len(check_optimizer(counter, PARAMS, update_params=None).errors) == 1


# ----------------------------------------------------- donation: a state that cannot be donated


def test_a_donated_state_that_holds_the_params_or_one_array_twice_is_named():
    """With ``donate_state=True``: the init state's leaf that is a params leaf, or an array
    another leaf holds (check-findings §10); nothing without it, nothing for a copy."""
    own = _transform(lambda p: {"x0": p, "m": jnp.zeros(2)}, lambda g, s, p=None: (g, s))
    zeros = jnp.zeros(2)
    twice = _transform(lambda p: {"a": zeros, "b": zeros}, lambda g, s, p=None: (g, s))
    copied = _transform(lambda p: {"x0": jax.tree.map(jnp.copy, p)}, lambda g, s, p=None: (g, s))
    assert check_optimizer(own, PARAMS).ok
    report = check_optimizer(own, PARAMS, donate_state=True)
    assert [(f.family, f.where) for f in report.errors] == [
        ("donated state", "state['x0']['b']"),
        ("donated state", "state['x0']['w']"),
    ]
    assert "params['b']" in report.errors[0].what
    both = check_optimizer(
        _transform(lambda p: (jnp.zeros(2),) * 2, lambda g, s, p=None: (g, s)),
        PARAMS,
        donate_state=True,
    )
    assert [f.where for f in both.errors] == ["state[1]"]
    assert "state[0]" in both.errors[0].what
    closed_over = check_optimizer(twice, PARAMS, donate_state=True)
    assert [f.where for f in closed_over.errors] == ["state['b']"]
    assert check_optimizer(copied, PARAMS, donate_state=True).ok
    assert check_optimizer(optax.adam(1e-2), PARAMS, donate_state=True).ok
    with pytest.raises(TypeError, match="donate_state must be True"):
        check_optimizer(optax.adam(1e-2), PARAMS, donate_state="yes")


# ------------------------------------------------- the cases' own set-ups, judged

CURRENT = [
    (c.key, s.name) for c in cases.CASES for s in c.checks if s.release == "current" and not s.x64
]


@pytest.mark.parametrize("key, name", CURRENT, ids=[f"{k}:{n}" for k, n in CURRENT])
def test_check_setups_get_their_verdict(key, name):
    from casebook.check import check_optimizer

    setup = cases.get(key).check(name)
    report = check_optimizer(**setup.build())
    assert report.ok != setup.buggy, str(report)


ELSEWHERE = [
    (c.key, s.name) for c in cases.CASES for s in c.checks if s.release != "current" or s.x64
]


@pytest.mark.parametrize("key, name", ELSEWHERE, ids=[f"{k}:{n}" for k, n in ELSEWHERE])
def test_check_setups_on_old_releases_and_x64_get_their_verdict(key, name):
    """These run in a subprocess: on the old release where the bug lives, or in 64-bit mode."""
    setup = cases.get(key).check(name)
    code = (
        f"from casebook.cases import get\nfrom casebook.check import check_optimizer\n"
        f"result = check_optimizer(**get({key!r}).check({name!r}).build()).ok\n"
    )
    outcome = releases.run(
        code, setup.release if setup.release != "current" else releases.CURRENT, x64=setup.x64
    )
    assert outcome.ok, outcome.summary
    assert outcome.result != setup.buggy

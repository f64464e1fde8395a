"""casebook.check: each family of defect on a synthetic optimizer, and no false alarms."""

from __future__ import annotations

import time

import equinox as eqx
import jax
import jax.numpy as jnp
import optax
import pytest

from casebook.check import CheckReport, OptimizerCheckError, check_optimizer

PARAMS = {"w": jnp.ones((3, 2)), "b": jnp.zeros(2)}


def _transform(init, update):
    return optax.GradientTransformation(init, update)


def _families(report: CheckReport) -> set[str]:
    return report.families()


# ---------------------------------------------------------------- family 1: state drift


def test_dtype_drift_of_a_state_leaf_is_an_error_with_its_path():
    opt = _transform(lambda p: {"count": jnp.zeros([], jnp.int32)},
                     lambda g, s, p=None: (g, {"count": (s["count"] + 1).astype(jnp.int16)}))
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


# ------------------------------------------------------- family 2: non-array leaves


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


# -------------------------------------------------- family 3: callable hyperparameters


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
        1e-3, mask=lambda p: jax.tree.map(lambda x: x.ndim > 1, p))
    (finding,) = check_optimizer(opt, PARAMS).errors
    assert finding.family == "callable hyperparameter" and "returns bool[]" in finding.what


# ------------------------------------------------------------------- no false alarms


def _lbfgs_problem():
    f = lambda x: jnp.sum((1 - x[:-1]) ** 2 + 100 * (x[1:] - x[:-1] ** 2) ** 2)
    x = jnp.zeros(4)
    value, grad = jax.value_and_grad(f)(x)
    return x, grad, {"value": value, "grad": grad, "value_fn": f}


@pytest.mark.parametrize("name", ["adam", "adamw-tree-mask", "inject-static-args", "multisteps",
                                  "lbfgs-x64"])
def test_correct_set_ups_raise_no_alarm(name):
    model = Model(jnp.ones(3))
    if name == "adam":
        report = check_optimizer(optax.adam(1e-3), PARAMS)
    elif name == "adamw-tree-mask":
        report = check_optimizer(optax.adamw(1e-3, mask={"w": True, "b": False}), PARAMS)
    elif name == "inject-static-args":
        opt = optax.inject_hyperparams(optax.adamw, static_args="mask")(1e-3, mask=Mask(True, False))
        report = check_optimizer(opt, Mask(jnp.ones(2), jnp.zeros(2)))
    elif name == "multisteps":
        report = check_optimizer(optax.MultiSteps(optax.adam(1e-3), 2), eqx.filter(model, eqx.is_array))
    else:
        with jax.enable_x64(True):
            x, grad, kwargs = _lbfgs_problem()
            report = check_optimizer(optax.lbfgs(), x, grad, update_kwargs=kwargs)
    assert report.ok, str(report)


def test_fast_enough_on_lbfgs():
    x, grad, kwargs = _lbfgs_problem()
    check_optimizer(optax.lbfgs(), x, grad, update_kwargs=kwargs)  # warm the imports
    t0 = time.perf_counter()
    check_optimizer(optax.lbfgs(), x * 2, grad, update_kwargs=kwargs)
    assert time.perf_counter() - t0 < 1.0


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

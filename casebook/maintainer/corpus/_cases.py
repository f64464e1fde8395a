"""Corpus set-ups written one by one: documentation replicas, and set-ups with known bugs.

The replicas follow the optax and equinox documentation examples (the equinox training
loop, its frozen-layer example, optax's ``monitor`` docstring, lookahead, gradient
accumulation, L-BFGS with ``value_and_grad_from_state``).  The others carry the bugs the
book knows or that the check found (``casebook.check`` families 1 to 3), and the
callables that look like those bugs but are fine (a schedule that is an Equinox module or a
``Partial``).  As everywhere in the corpus, the oracle decides what is a bug.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import optax
from jax.lax import cond as imported_cond

from casebook.maintainer.corpus._setups import Built, SetUp, grads_like, param_kind


def _dict(dtype: Any = jnp.float32) -> tuple[Any, Any]:
    params, _, grads, _ = param_kind("dict", dtype)
    return params, grads


def _square_params() -> tuple[Any, Any]:
    params = {"w": jnp.eye(3) + 0.1, "b": jnp.full(3, 0.5)}
    return params, grads_like(params)


def _by_ndim(p: Any) -> Any:
    return jax.tree.map(lambda x: x.ndim > 1, p)


def _all_adam(p: Any) -> Any:
    return jax.tree.map(lambda x: None, p)


# --------------------------------------------------------------------------- replicas


def _equinox_training_loop() -> Built:
    model = eqx.nn.MLP(2, 1, 8, 2, key=jax.random.key(0))
    x, y = jnp.ones((4, 2)), jnp.zeros((4, 1))
    grads = eqx.filter_grad(lambda m: jnp.mean((jax.vmap(m)(x) - y) ** 2))(model)
    arrays = eqx.filter(model, eqx.is_inexact_array)
    return Built(optax.adamw(1e-3), eqx.filter(model, eqx.is_array), grads, arrays)


def _equinox_frozen_layer() -> Built:
    model = eqx.nn.MLP(2, 1, 8, 2, key=jax.random.key(0))
    spec = jax.tree.map(lambda _: False, model)
    spec = eqx.tree_at(
        lambda t: (t.layers[-1].weight, t.layers[-1].bias), spec, replace=(True, True)
    )
    diff, static = eqx.partition(model, spec)
    grads = eqx.filter_grad(lambda d: jnp.sum(eqx.combine(d, static)(jnp.ones(2)) ** 2))(diff)
    return Built(optax.adam(1e-2), model, grads, eqx.filter(model, spec), with_params=False)


def _optax_monitor_docstring() -> Built:
    solver = optax.chain(
        optax.sgd(learning_rate=0.1, momentum=0.9),
        optax.monitor(
            {
                "norm_before_clip": optax.tree.norm,
                "is_clipped_ema": optax.measure_with_ema(
                    lambda u: optax.tree.norm(u) > 1.0, decay=0.9
                ),
            }
        ),
        optax.clip_by_global_norm(1.0),
    )
    params = jnp.array([1.0, 2.0, 3.0])
    return Built(solver, params, 2 * params, with_params=False)


def _optax_snapshot_docstring() -> Built:
    solver = optax.chain(
        optax.sgd(learning_rate=0.1, momentum=0.9),
        optax.snapshot("norm_before_clip", lambda u: optax.tree.norm(u)),
        optax.clip_by_global_norm(0.05),
    )
    params = jnp.array([1.0, 2.0, 3.0])
    return Built(solver, params, 2 * params, with_params=False)


def _lookahead() -> Built:
    params, grads = _dict()
    return Built(
        optax.lookahead(optax.adam(1e-2), sync_period=2, slow_step_size=0.5),
        optax.LookaheadParams.init_synced(params),
        grads,
    )


def _gradient_accumulation() -> Built:
    params, grads = _dict()
    return Built(optax.MultiSteps(optax.adam(1e-2), every_k_schedule=4), params, grads)


def _lbfgs_docs() -> Built:
    def f(x: Any) -> Any:
        return jnp.sum((1 - x[:-1]) ** 2 + 100 * (x[1:] - x[:-1] ** 2) ** 2)

    x = jnp.zeros(4)
    value, grad = jax.value_and_grad(f)(x)
    return Built(optax.lbfgs(), x, grad, update_kwargs=dict(value=value, grad=grad, value_fn=f))


# --------------------------------------------------------------------------- callables


class Decay(eqx.Module):
    """A learning-rate schedule that is a callable pytree (fine under inject_hyperparams)."""

    rate: jax.Array

    def __call__(self, count: Any) -> Any:
        return self.rate / (1.0 + count)


class Net(eqx.Module):
    """A pytree with a ``__call__`` (used as a mask or labels: callable data)."""

    w: Any
    b: Any

    def __call__(self, x: Any, y: Any) -> Any:
        return x


def _inject(factory: Any, params_grads: tuple[Any, Any], **kwargs: Any) -> Built:
    """inject_hyperparams(factory)(**kwargs), with the plain factory as the reference."""
    params, grads = params_grads
    return Built(
        optax.inject_hyperparams(factory)(**kwargs), params, grads, reference=factory(**kwargs)
    )


def _module_mask() -> Built:
    net = Net(jnp.ones((2, 2)), jnp.zeros(2))
    return Built(
        optax.inject_hyperparams(optax.adamw)(1e-2, mask=Net(True, False)), net, grads_like(net)
    )


def _module_labels() -> Built:
    net = Net(jnp.ones((2, 2)), jnp.zeros(2))
    opt = optax.multi_transform({"a": optax.adam(1e-2), "s": optax.sgd(1e-2)}, Net("a", "s"))
    return Built(opt, net, grads_like(net))


# --------------------------------------------------------------------------- synthetic


def _transform(init: Any, update: Any) -> Built:
    params, grads = _dict()
    return Built(optax.GradientTransformation(init, update), params, grads)


def _switch_drift() -> Built:
    def update(g: Any, s: Any, p: Any = None) -> Any:
        return g, jax.lax.switch(
            s["c"] % 2,
            [lambda s: {"c": s["c"] + 1}, lambda s: {"c": (s["c"] + 1).astype(jnp.int16)}],
            s,
        )

    return _transform(lambda p: {"c": jnp.zeros((), jnp.int32)}, update)


def _imported_cond_drift() -> Built:
    def update(g: Any, s: Any, p: Any = None) -> Any:
        return g, imported_cond(s["c"] > 0, lambda s: s, lambda s: {"c": s["c"] > 1}, s)

    return _transform(lambda p: {"c": jnp.zeros((), jnp.int32)}, update)


def _late_drift() -> Built:
    """a loses its weak type in step 1, b in step 2, and c (int16) turns int32 in step 3."""

    def update(g: Any, s: Any, p: Any = None) -> Any:
        return g, {"a": s["a"] + jnp.int32(1), "b": s["b"] + s["a"], "c": s["c"] + s["b"]}

    return _transform(
        lambda p: {"a": jnp.asarray(0), "b": jnp.asarray(0), "c": jnp.zeros((), jnp.int16)}, update
    )


def _no_params_drift() -> Built:
    def update(g: Any, s: Any, p: Any = None) -> Any:
        return g, {"c": s["c"] + (1 if p is not None else 1.5)}

    built = _transform(lambda p: {"c": jnp.zeros((), jnp.int32)}, update)
    built.with_params = False
    return built


def _mixed_precision(optimizer: Any) -> Built:
    params, _ = _dict(jnp.bfloat16)
    return Built(optimizer, params, grads_like(params, jnp.float32))


def _bf16(factory: Any, **kwargs: Any) -> Built:
    params, grads = _dict(jnp.bfloat16)
    return Built(factory(**kwargs), params, grads)


def case_set_ups() -> Iterator[SetUp]:
    """The hand-written set-ups (documentation replicas, callables, known bugs)."""

    def hp(**kwargs: Any) -> dict[str, Any]:
        return dict(learning_rate=1.0, weight_decay=0.5, **kwargs)

    cases = {
        "docs/equinox-training-loop": _equinox_training_loop,
        "docs/equinox-frozen-layer": _equinox_frozen_layer,
        "docs/optax-monitor-docstring": _optax_monitor_docstring,
        "docs/optax-snapshot-docstring": _optax_snapshot_docstring,
        "docs/lookahead": _lookahead,
        "docs/gradient-accumulation": _gradient_accumulation,
        "docs/lbfgs": _lbfgs_docs,
        "callable/module-schedule": lambda: _inject(
            optax.adam, _dict(), learning_rate=Decay(jnp.array(1e-2))
        ),
        "callable/partial-schedule": lambda: _inject(
            optax.adam, _dict(), learning_rate=jax.tree_util.Partial(lambda r, c: r / (1 + c), 1e-2)
        ),
        "callable/adamw-mask-fn": lambda: _inject(optax.adamw, _dict(), mask=_by_ndim, **hp()),
        "callable/adamw-module-mask": _module_mask,
        "callable/multi_transform-module-labels": _module_labels,
        "callable/lars-weight_decay_mask": lambda: _inject(
            optax.lars, _dict(), weight_decay_mask=_by_ndim, **hp()
        ),
        "callable/lars-trust_ratio_mask": lambda: _inject(
            optax.lars, _dict(), trust_ratio_mask=_by_ndim, **hp()
        ),
        "callable/muon-weight_decay_mask": lambda: _inject(
            optax.contrib.muon, _square_params(), weight_decay_mask=_by_ndim, **hp()
        ),
        "callable/muon-dimension-numbers-fn": lambda: _inject(
            optax.contrib.muon,
            _square_params(),
            learning_rate=1.0,
            muon_weight_dimension_numbers=_all_adam,
        ),
        "drift/switch": _switch_drift,
        "drift/imported-cond": _imported_cond_drift,
        "drift/late-step-3": _late_drift,
        "drift/without-params": _no_params_drift,
        "drift/mixed-precision-adam": lambda: _mixed_precision(optax.adam(1e-2)),
        "drift/mixed-precision-sgd": lambda: _mixed_precision(optax.sgd(1e-2)),
        "found/inject-adamw-f32-hyperparams-bf16": lambda: _bf16(
            optax.inject_hyperparams(optax.adamw, hyperparam_dtype=jnp.float32), learning_rate=1e-2
        ),
        "found/inject-adamw-bf16": lambda: _bf16(
            optax.inject_hyperparams(optax.adamw), learning_rate=1e-2
        ),
    }
    representative = {
        "docs/equinox-frozen-layer",
        "docs/optax-monitor-docstring",
        "docs/lookahead",
        "callable/module-schedule",
        "callable/lars-weight_decay_mask",
        "callable/multi_transform-module-labels",
        "drift/switch",
        "drift/late-step-3",
        "drift/mixed-precision-adam",
        "found/inject-adamw-f32-hyperparams-bf16",
    }
    for name, make in cases.items():
        yield SetUp(name, make, representative=name in representative)

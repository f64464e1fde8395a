"""The corpus of real optimizer set-ups that :mod:`casebook.maintainer.corpus` judges the check on.

Each :class:`SetUp` builds (lazily, so that x64 set-ups create their arrays with x64 on)
a :class:`Built`: the optimizer, what the user's code passes to ``init`` and ``update``,
the concrete grads, how ``update`` is called, and, for a wrapper that may silently
change what an optimizer does, a reference optimizer whose updates must match.

The set-ups are optax's aliases and transformations crossed with kinds of parameters
(a dict of arrays, an Equinox MLP's arrays, a single vector, an Equinox module that keeps
int, bool and PRNG-key buffers; for the wide survey of :mod:`casebook.maintainer.corpus._wide` also a
0-d leaf, a ``None`` leaf and a conv kernel) and precisions (f32, bf16, f64 under x64; and
f16, mixed trees such as ``"f32+bf16"``, and grads in another dtype, ``"f32-grads-bf16"``:
see :func:`precision_kind`), common wrappers and combinations, replicas of the optax and equinox documentation examples, and
set-ups built to have the bugs the book knows.  Whether a set-up is fine is not written
down here: the oracle in :mod:`casebook.maintainer.corpus` finds out by running it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import optax

PRECISIONS = {"f32": jnp.float32, "bf16": jnp.bfloat16, "f16": jnp.float16, "f64": jnp.float64}


@dataclass
class Built:
    """One set-up, ready to run: everything the check and the oracle need."""

    optimizer: Any
    params: Any  # what update gets (a whole model is allowed)
    grads: Any  # the concrete grads (None where filter_grad gives None)
    init_params: Any = None  # what init gets, when it differs from params
    update_kwargs: dict[str, Any] = field(default_factory=dict)
    with_params: bool = True  # update(grads, state, params) or update(grads, state)
    reference: Any = None  # an optimizer whose updates must match (silent bugs)
    check_kwargs: dict[str, Any] = field(default_factory=dict)  # e.g. grads_dtype


@dataclass(frozen=True)
class SetUp:
    """A named, lazily built set-up; ``x64`` ones are built and run with x64 on."""

    name: str
    make: Callable[[], Built]
    x64: bool = False
    representative: bool = False


# --------------------------------------------------------------------------- params


class Buffers(eqx.Module):
    """A model that keeps buffers optax must not train: int positions, a bool mask and a
    PRNG key, next to its weights (what ``eqx.filter_grad`` gives ``None`` for)."""

    weight: jax.Array
    bias: jax.Array
    positions: jax.Array
    active: jax.Array
    key: jax.Array


def grads_like(params: Any, dtype: Any = None) -> Any:
    """Concrete grads: a fixed pattern on the float leaves, None elsewhere."""

    def one(x: Any) -> Any:
        if isinstance(x, jax.Array) and jnp.issubdtype(x.dtype, jnp.inexact):
            return (0.1 * jnp.cos(jnp.arange(x.size, dtype=jnp.float32)).reshape(x.shape)).astype(
                dtype or x.dtype
            )
        return None

    return jax.tree.map(one, params)


def param_kind(kind: str, dtype: Any) -> tuple[Any, Any, Any, bool]:
    """(params for update, params for init, grads, update gets params) of one kind."""
    params: Any
    model: Any
    key = jax.random.key(0)
    if kind == "dict":
        params = {"w": jax.random.normal(key, (4, 3)).astype(dtype), "b": jnp.full(3, 0.5, dtype)}
        return params, None, grads_like(params), True
    if kind == "vector":
        params = jnp.linspace(-1.0, 1.0, 5).astype(dtype)
        return params, None, grads_like(params), True
    if kind == "scalar":  # a 0-d leaf (a learned temperature or gate) next to a matrix
        params = {"w": jax.random.normal(key, (4, 3)).astype(dtype), "s": jnp.asarray(0.5, dtype)}
        return params, None, grads_like(params), True
    if kind == "none":  # a None leaf (an optional bias left out), an empty subtree
        params = {"w": jax.random.normal(key, (4, 3)).astype(dtype), "b": None}
        return params, None, grads_like(params), True
    if kind == "tensor":  # a conv kernel (4-d) and its bias (1-d): not a matrix
        params = {"k": jax.random.normal(key, (2, 3, 3, 4)).astype(dtype), "b": jnp.zeros(4, dtype)}
        return params, None, grads_like(params), True
    if kind == "mlp":  # the equinox examples: arrays only, update(grads, state) as in many
        model = eqx.nn.MLP(3, 2, 4, 1, key=key)
        params = jax.tree.map(
            lambda x: x.astype(dtype) if eqx.is_inexact_array(x) else x,
            eqx.filter(model, eqx.is_inexact_array),
        )
        return params, None, grads_like(params), False
    model = Buffers(
        jax.random.normal(key, (3, 3)).astype(dtype),
        jnp.zeros(3, dtype),
        jnp.arange(3),
        jnp.array([True, False, True]),
        jax.random.key(1),
    )
    return model, eqx.filter(model, eqx.is_inexact_array), grads_like(model), True


def precision_kind(kind: str, precision: str) -> tuple[Any, Any, Any, bool]:
    """:func:`param_kind` for a precision label: ``"bf16"`` (every float leaf),
    ``"f32+bf16"`` (a mixed tree: the first leaf's dtype, then the second's for the
    others; the ``dict`` kind only) or ``"f32-grads-bf16"`` (f32 params, bf16 grads)."""
    if "-grads-" in precision:
        precision, grads_precision = precision.split("-grads-")
        params, init_params, _, with_params = param_kind(kind, PRECISIONS[precision])
        return params, init_params, grads_like(params, PRECISIONS[grads_precision]), with_params
    if "+" in precision:
        first, second = precision.split("+")
        params, init_params, _, with_params = param_kind(kind, PRECISIONS[second])
        params = {**params, "w": params["w"].astype(PRECISIONS[first])}
        return params, init_params, grads_like(params), with_params
    return param_kind(kind, PRECISIONS[precision])


def _standard(
    factory: Callable[[], Any],
    kind: str,
    precision: str,
    *,
    update_kwargs: Callable[[Any, Any], dict[str, Any]] | None = None,
) -> Built:
    params, init_params, grads, with_params = precision_kind(kind, precision)
    kwargs = update_kwargs(params, grads) if update_kwargs else {}
    return Built(factory(), params, grads, init_params, kwargs, with_params or bool(kwargs))


# --------------------------------------------------------------------------- aliases


def loss_dtype(params: Any) -> Any:
    """The dtype of a loss of ``params``: their float leaves' dtypes promoted."""
    return jnp.result_type(*(x for x in jax.tree.leaves(params) if eqx.is_inexact_array(x)))


def _value_kwargs(params: Any, grads: Any) -> dict[str, Any]:
    return {"value": jnp.asarray(1.0, loss_dtype(params))}


def quadratic(p: Any) -> Any:
    """A loss: the squared norm of the float leaves, in their promoted dtype."""
    return sum(  # type: ignore[union-attr]
        jnp.sum(jnp.square(x.astype(jnp.float32)))
        for x in jax.tree.leaves(p)
        if eqx.is_inexact_array(x)
    ).astype(loss_dtype(p))


def _lbfgs_kwargs(params: Any, grads: Any) -> dict[str, Any]:
    return {"value": quadratic(params), "grad": grads, "value_fn": quadratic}


ALIASES: dict[str, Callable[[], Any]] = {
    "adabelief": lambda: optax.adabelief(1e-2),
    "adadelta": lambda: optax.adadelta(1e-2),
    "adafactor": lambda: optax.adafactor(1e-2),
    "adagrad": lambda: optax.adagrad(1e-2),
    "adam": lambda: optax.adam(1e-2),
    "adamw": lambda: optax.adamw(1e-2),
    "adamax": lambda: optax.adamax(1e-2),
    "adamaxw": lambda: optax.adamaxw(1e-2),
    "adan": lambda: optax.adan(1e-2),
    "amsgrad": lambda: optax.amsgrad(1e-2),
    "fromage": lambda: optax.fromage(1e-2),
    "lamb": lambda: optax.lamb(1e-2),
    "lars": lambda: optax.lars(1e-2),
    "lion": lambda: optax.lion(1e-2),
    "nadam": lambda: optax.nadam(1e-2),
    "nadamw": lambda: optax.nadamw(1e-2),
    "noisy_sgd": lambda: optax.noisy_sgd(1e-2, key=jax.random.key(3)),
    "novograd": lambda: optax.novograd(1e-2),
    "optimistic_gradient_descent": lambda: optax.optimistic_gradient_descent(1e-2),
    "optimistic_adam": lambda: optax.optimistic_adam(1e-2),
    "radam": lambda: optax.radam(1e-2),
    "rmsprop": lambda: optax.rmsprop(1e-2),
    "rprop": lambda: optax.rprop(1e-2),
    "sgd": lambda: optax.sgd(1e-2, momentum=0.9),
    "sign_sgd": lambda: optax.sign_sgd(1e-2),
    "sm3": lambda: optax.sm3(1e-2),
    "yogi": lambda: optax.yogi(1e-2),
    "adamw-mask-tree": lambda: optax.adamw(
        1e-2, mask=lambda p: jax.tree.map(lambda x: x.ndim > 1, p)
    ),
    "muon": lambda: optax.contrib.muon(1e-2),
    "dog": lambda: optax.contrib.dog(),
    "dowg": lambda: optax.contrib.dowg(),
    "prodigy": lambda: optax.contrib.prodigy(),
    "schedule_free_adamw": lambda: optax.contrib.schedule_free_adamw(1e-2),
    "ademamix": lambda: optax.contrib.ademamix(1e-2),
    "cocob": lambda: optax.contrib.cocob(),
    "sophia": lambda: optax.contrib.sophia(1e-2),
}
NEEDS_VALUE = {"polyak_sgd": lambda: optax.polyak_sgd(), "momo": lambda: optax.contrib.momo()}
TRANSFORMS: dict[str, Callable[[], Any]] = {
    "clip": lambda: optax.clip(1.0),
    "clip_by_global_norm": lambda: optax.clip_by_global_norm(1.0),
    "clip_by_block_rms": lambda: optax.clip_by_block_rms(1.0),
    "adaptive_grad_clip": lambda: optax.adaptive_grad_clip(0.1),
    "centralize": lambda: optax.centralize(),
    "scale_by_adam": lambda: optax.scale_by_adam(),
    "scale_by_rms": lambda: optax.scale_by_rms(),
    "scale_by_stddev": lambda: optax.scale_by_stddev(),
    "scale_by_trust_ratio": lambda: optax.scale_by_trust_ratio(),
    "scale_by_schedule": lambda: optax.scale_by_schedule(optax.cosine_decay_schedule(1.0, 10)),
    "scale_by_learning_rate": lambda: optax.scale_by_learning_rate(1e-2),
    "add_noise": lambda: optax.add_noise(0.1, 0.5, 0),
    "add_decayed_weights": lambda: optax.add_decayed_weights(1e-4),
    "zero_nans": lambda: optax.zero_nans(),
    "ema": lambda: optax.ema(0.9),
    "trace": lambda: optax.trace(0.9),
    "scale_by_lion": lambda: optax.scale_by_lion(),
    "scale_by_sign": lambda: optax.scale_by_sign(),
    "scale_by_amsgrad": lambda: optax.scale_by_amsgrad(),
    "scale_by_belief": lambda: optax.scale_by_belief(),
    "scale_by_novograd": lambda: optax.scale_by_novograd(),
    "scale_by_distance_over_gradients": lambda: optax.scale_by_distance_over_gradients(),
    "normalize_by_update_norm": lambda: optax.normalize_by_update_norm(),
    "keep_params_nonnegative": lambda: optax.keep_params_nonnegative(),
    "snapshot": lambda: optax.snapshot("norm", optax.tree.norm),
    "monitor": lambda: optax.monitor({"norm": optax.tree.norm}),
}
WRAPPERS: dict[str, Callable[[], Any]] = {
    "MultiSteps": lambda: optax.MultiSteps(optax.adam(1e-2), every_k_schedule=2),
    "MultiSteps-zero_nans": lambda: optax.MultiSteps(
        optax.chain(optax.zero_nans(), optax.sgd(1e-2)), every_k_schedule=2
    ),
    "apply_if_finite": lambda: optax.apply_if_finite(optax.adam(1e-2), 3),
    "chain-clip-adamw": lambda: optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(1e-2)),
    "masked-tree": lambda: optax.masked(
        optax.adam(1e-2), lambda p: jax.tree.map(lambda x: x.ndim > 1, p)
    ),
    "inject-schedule": lambda: optax.inject_hyperparams(optax.adam)(
        optax.warmup_cosine_decay_schedule(0.0, 1e-2, 2, 10)
    ),
    "inject-static-mask": lambda: optax.inject_hyperparams(optax.adamw, static_args="mask")(
        1e-2, mask=lambda p: jax.tree.map(lambda x: x.ndim > 1, p)
    ),
    "inject_stateful": lambda: optax.inject_stateful_hyperparams(optax.sgd)(1e-2),
    "partition-by-ndim": lambda: optax.partition(
        {"m": optax.adam(1e-2), "v": optax.sgd(1e-2)},
        lambda p: jax.tree.map(lambda x: "m" if x.ndim > 1 else "v", p),
    ),
    "reduce_on_plateau": lambda: optax.chain(
        optax.adam(1e-2), optax.contrib.reduce_on_plateau(patience=2)
    ),
}


def _alias_set_ups() -> Iterator[SetUp]:
    for name, factory in ALIASES.items():
        for kind in ("dict", "vector", "mlp", "buffers"):
            yield SetUp(
                f"{name}/{kind}/f32",
                lambda f=factory, k=kind: _standard(f, k, "f32"),
                representative=(name, kind)
                in {("adam", "dict"), ("adamw", "buffers"), ("lion", "mlp")},
            )
        for precision in ("bf16", "f64"):
            yield SetUp(
                f"{name}/dict/{precision}",
                lambda f=factory, p=precision: _standard(f, "dict", p),
                x64=precision == "f64",
            )
    for name, factory in NEEDS_VALUE.items():
        for precision in ("f32", "bf16", "f64"):
            yield SetUp(
                f"{name}/dict/{precision}",
                lambda f=factory, p=precision: _standard(f, "dict", p, update_kwargs=_value_kwargs),
                x64=precision == "f64",
            )
    for precision in ("f32", "f64"):
        yield SetUp(
            f"lbfgs/vector/{precision}",
            lambda p=precision: _standard(optax.lbfgs, "vector", p, update_kwargs=_lbfgs_kwargs),
            x64=precision == "f64",
        )


def _transform_set_ups() -> Iterator[SetUp]:
    for name, factory in {**TRANSFORMS, **WRAPPERS}.items():
        for precision in ("f32", "bf16", "f64"):
            yield SetUp(
                f"{name}/dict/{precision}",
                lambda f=factory, p=precision: _standard(f, "dict", p),
                x64=precision == "f64",
                representative=name in {"monitor", "MultiSteps-zero_nans"} and precision == "f32",
            )
        yield SetUp(f"{name}/buffers/f32", lambda f=factory: _standard(f, "buffers", "f32"))


def generated_set_ups() -> list[SetUp]:
    """The aliases, transformations and wrappers crossed with kinds of params and
    precisions, in a fixed order."""
    return [*_alias_set_ups(), *_transform_set_ups()]

"""The wide survey: every public optimizer and transformation of optax, on every kind of
tree.

:data:`FACTORIES` builds each public ``GradientTransformation`` of ``optax``,
``optax.transforms`` and ``optax.contrib`` (the names :func:`public_factories` finds)
with default-ish arguments, and says what its ``update`` needs besides the grads: a
``value`` (Polyak, MoMo, reduce-on-plateau), ``value``, ``grad`` and ``value_fn`` (the line
searches and L-BFGS), or ``obj_fn`` (Sophia and the Hutchinson estimator).  The names
that are not transformations, or that the survey leaves to a written case, are in
:data:`NOT_SURVEYED` with the reason.  :data:`WIDE_KINDS` are the trees: the corpus's
kinds (a dict, a vector, an Equinox MLP, a model with int, bool and key buffers), and
trees of mixed dtypes (f32 with bf16, f16 or, under x64, f64 leaves), f16, grads in
another dtype than the params, a 0-d leaf, a ``None`` leaf and a 4-d conv kernel (not a
matrix, for Muon, GaLore and the factored optimizers).  :func:`wide_set_ups` crosses
them; ``python -m casebook.maintainer.corpus --wide`` runs them.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import optax
import optax.contrib as contrib
import optax.transforms

from casebook.maintainer.corpus._setups import (
    ALIASES,
    NEEDS_VALUE,
    TRANSFORMS,
    WRAPPERS,
    Built,
    SetUp,
    loss_dtype,
    precision_kind,
    quadratic,
)

KwargsFn = Callable[[Any, Any], dict[str, Any]]


def _value(params: Any, grads: Any) -> dict[str, Any]:
    return {"value": jnp.asarray(1.0, loss_dtype(params))}


def _line_search(params: Any, grads: Any) -> dict[str, Any]:
    return {"value": quadratic(params), "grad": grads, "value_fn": quadratic}


def _obj_fn(params: Any, grads: Any) -> dict[str, Any]:
    return {"obj_fn": quadratic}


@dataclass(frozen=True)
class Factory:
    """How to build one transformation for given params, and what its update needs."""

    make: Callable[[Any], Any]  # params -> the transformation (most ignore the params)
    kwargs: KwargsFn | None = None  # params, grads -> update's extra keyword arguments


def _plain(factory: Callable[[], Any], kwargs: KwargsFn | None = None) -> Factory:
    return Factory(lambda params: factory(), kwargs)


def _low_ndim(params: Any) -> Any:
    return jax.tree.map(lambda x: jnp.ndim(x) < 2, params)


def _sgd() -> Any:
    return optax.sgd(1e-2)


def _adam() -> Any:
    return optax.adam(1e-2)


_NEW: dict[str, Factory] = {
    # optax.__all__ and the public optax names not in it (optax.transforms)
    "adam-default-args": _plain(lambda: optax.adam(1e-3)),
    "apply_every": _plain(lambda: optax.apply_every(2)),
    "chain": _plain(lambda: optax.chain(optax.clip(1.0), _adam())),
    "named_chain": _plain(lambda: optax.named_chain(("clip", optax.clip(1.0)), ("adam", _adam()))),
    "conditionally_mask": _plain(
        lambda: optax.conditionally_mask(_adam(), lambda step: step % 2 == 0)
    ),
    "conditionally_transform": _plain(
        lambda: optax.conditionally_transform(_adam(), lambda step: step % 2 == 0)
    ),
    "flatten": _plain(lambda: optax.flatten(_adam())),
    "freeze": Factory(lambda params: optax.transforms.freeze(_low_ndim(params))),
    "selective_transform": Factory(
        lambda params: optax.transforms.selective_transform(_adam(), freeze_mask=_low_ndim(params))
    ),
    "identity": _plain(optax.identity),
    "set_to_zero": _plain(optax.set_to_zero),
    "scale": _plain(lambda: optax.scale(0.1)),
    "stateless": _plain(lambda: optax.stateless(lambda g, p: jax.tree.map(lambda x: -x, g))),
    "stateless_with_tree_map": _plain(lambda: optax.stateless_with_tree_map(lambda g, p: -g)),
    "inject_hyperparams-adam": _plain(lambda: optax.inject_hyperparams(optax.adam)(1e-2)),
    "masked-fn": _plain(lambda: optax.masked(_adam(), _low_ndim)),
    "multi_transform": _plain(
        lambda: optax.multi_transform(
            {"a": _adam(), "s": _sgd()},
            lambda p: jax.tree.map(lambda x: "s" if jnp.ndim(x) < 2 else "a", p),
        )
    ),
    "measure_with_ema": _plain(lambda: optax.measure_with_ema(optax.tree.norm, 0.9)),
    "optimistic_adam_v2": _plain(lambda: optax.optimistic_adam_v2(1e-2)),
    "signum": _plain(lambda: optax.signum(1e-2)),
    "scale_by_adadelta": _plain(optax.scale_by_adadelta),
    "scale_by_adamax": _plain(optax.scale_by_adamax),
    "scale_by_adan": _plain(optax.scale_by_adan),
    "scale_by_factored_rms": _plain(optax.scale_by_factored_rms),
    "scale_by_lbfgs": _plain(optax.scale_by_lbfgs),
    "scale_by_optimistic_gradient": _plain(optax.scale_by_optimistic_gradient),
    "scale_by_param_block_norm": _plain(optax.scale_by_param_block_norm),
    "scale_by_param_block_rms": _plain(optax.scale_by_param_block_rms),
    "scale_by_radam": _plain(optax.scale_by_radam),
    "scale_by_rprop": _plain(lambda: optax.scale_by_rprop(1e-2)),
    "scale_by_rss": _plain(optax.scale_by_rss),
    "scale_by_sm3": _plain(optax.scale_by_sm3),
    "scale_by_yogi": _plain(optax.scale_by_yogi),
    "scale_by_polyak": _plain(optax.scale_by_polyak, _value),
    "reduce_on_plateau-value": _plain(
        lambda: optax.chain(_adam(), contrib.reduce_on_plateau(patience=2)), _value
    ),
    "lbfgs": _plain(optax.lbfgs, _line_search),
    "scale_by_backtracking_linesearch": _plain(
        lambda: optax.chain(_sgd(), optax.scale_by_backtracking_linesearch(15)), _line_search
    ),
    "scale_by_zoom_linesearch": _plain(
        lambda: optax.chain(_sgd(), optax.scale_by_zoom_linesearch(15)), _line_search
    ),
    # optax.contrib
    "acprop": _plain(lambda: contrib.acprop(1e-2)),
    "adopt": _plain(lambda: contrib.adopt(1e-2)),
    "dadapt_adamw": _plain(contrib.dadapt_adamw),
    "differentially_private_aggregate": _plain(
        lambda: contrib.differentially_private_aggregate(1.0, 0.1, key=jax.random.key(0))
    ),
    "dpsgd": _plain(lambda: contrib.dpsgd(1e-2, 1.0, 0.1, seed=0)),
    "galore": _plain(lambda: contrib.galore(1e-2, rank=2, update_proj_gap=2)),
    "scale_by_galore": _plain(lambda: contrib.scale_by_galore(rank=2, update_proj_gap=2)),
    "hutchinson_estimator_diag_hessian": _plain(contrib.hutchinson_estimator_diag_hessian, _obj_fn),
    "sophia-obj_fn": _plain(lambda: contrib.sophia(1e-2), _obj_fn),
    "madgrad": _plain(lambda: contrib.madgrad(1e-2)),
    "mechanize": _plain(lambda: contrib.mechanize(_adam())),
    "momo_adam": _plain(contrib.momo_adam, _value),
    "normalize": _plain(contrib.normalize),
    "sam": _plain(lambda: contrib.sam(_sgd(), _sgd())),
    "scale_by_acprop": _plain(contrib.scale_by_acprop),
    "scale_by_ademamix": _plain(contrib.scale_by_ademamix),
    "scale_by_adopt": _plain(contrib.scale_by_adopt),
    "scale_by_cocob": _plain(contrib.scale_by_cocob),
    "scale_by_madgrad": _plain(lambda: contrib.scale_by_madgrad(1e-2)),
    "scale_by_muon": _plain(contrib.scale_by_muon),
    "scale_by_simplified_ademamix": _plain(contrib.scale_by_simplified_ademamix),
    "schedule_free": _plain(lambda: contrib.schedule_free(_sgd(), 1e-2)),
    "schedule_free_sgd": _plain(contrib.schedule_free_sgd),
    "simplified_ademamix": _plain(lambda: contrib.simplified_ademamix(1e-2)),
    "split_real_and_imaginary": _plain(lambda: contrib.split_real_and_imaginary(_adam())),
}

FACTORIES: dict[str, Factory] = {
    **{name: _plain(f) for name, f in {**ALIASES, **TRANSFORMS, **WRAPPERS}.items()},
    **{name: _plain(f, _value) for name, f in NEEDS_VALUE.items()},
    **_NEW,
}
"""Every surveyed transformation by its corpus name (the corpus's own first)."""

NOT_SURVEYED: dict[str, str] = {
    "lookahead": "its params are optax.LookaheadParams: the written case docs/lookahead",
}
"""Public transformation factories the survey does not cross with the kinds, and why."""

# The survey's names for public factories it builds under another name.
_ALIASED = {
    "masked": "masked-fn",
    "partition": "partition-by-ndim",
    "inject_hyperparams": "inject_hyperparams-adam",
    "inject_stateful_hyperparams": "inject_stateful",
    "sophia": "sophia-obj_fn",
    "reduce_on_plateau": "reduce_on_plateau-value",
}

WIDE_KINDS: tuple[tuple[str, str, bool], ...] = (
    ("dict", "f32", False),
    ("vector", "f32", False),
    ("mlp", "f32", False),
    ("buffers", "f32", False),
    ("dict", "bf16", False),
    ("dict", "f16", False),
    ("dict", "f64", True),
    ("dict", "f32+bf16", False),
    ("dict", "f32+f16", False),
    ("dict", "f32+f64", True),
    ("dict", "f32-grads-bf16", False),
    ("dict", "bf16-grads-f32", False),
    ("scalar", "f32", False),
    ("scalar", "bf16", False),
    ("none", "f32", False),
    ("tensor", "f32", False),
)
"""(kind, precision, x64) of every tree the wide survey runs each factory on."""


def _returns_transformation(obj: Any) -> bool:
    if inspect.isclass(obj):
        return obj is optax.MultiSteps
    if not callable(obj):
        return False
    try:
        annotation = inspect.signature(obj).return_annotation
    except (TypeError, ValueError):
        return False
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    return "GradientTransformation" in str(text)


def public_factories() -> set[str]:
    """The public names of optax, optax.transforms and optax.contrib whose signature says
    they return a ``GradientTransformation`` (and ``MultiSteps``), plus ``monitor``,
    ``snapshot``, ``dog`` and ``dowg``, whose signatures do not say it."""
    names: set[str] = {"monitor", "snapshot", "dog", "dowg"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # optax.dpsgd and kin
        for module in (optax, optax.transforms, contrib):
            public = getattr(module, "__all__", None) or dir(module)
            for name in public:
                if not name.startswith("_") and _returns_transformation(getattr(module, name)):
                    names.add(name)
    return names


def surveyed_name(public: str) -> str | None:
    """The survey's name for a public factory (None: in :data:`NOT_SURVEYED`)."""
    if public in NOT_SURVEYED:
        return None
    return _ALIASED.get(public, public)


def _build(factory: Factory, kind: str, precision: str) -> Built:
    params, init_params, grads, with_params = precision_kind(kind, precision)
    kwargs = factory.kwargs(params, grads) if factory.kwargs else {}
    optimizer = factory.make(params if init_params is None else init_params)
    return Built(optimizer, params, grads, init_params, kwargs, with_params or bool(kwargs))


FOCUS = (
    "adam",
    "adamw",
    "sgd",
    "lion",
    "adafactor",
    "muon",
    "scale_by_muon",
    "galore",
    "sm3",
    "prodigy",
    "inject_hyperparams-adam",
    "apply_if_finite",
    "clip_by_global_norm",
    "lbfgs",
    "scale_by_zoom_linesearch",
)
"""The factories the default corpus runs on the new kinds of tree (the wide survey runs
every factory on them)."""

NEW_KINDS = WIDE_KINDS[5:6] + WIDE_KINDS[7:]
"""The kinds of tree that the corpus's generated set-ups did not have before the wide
survey: f16, mixed dtypes, grads in another dtype, 0-d and None leaves, a conv kernel."""

REPRESENTATIVE = {
    "adam/dict/f32+bf16",
    "prodigy/dict/f32+bf16",
    "inject_hyperparams-adam/dict/f32+bf16",
    "lbfgs/dict/f32+f16",
    "adam/dict/f32-grads-bf16",
    "apply_if_finite/dict/f32-grads-bf16",
    "sm3/scalar/f32",
    "adafactor/scalar/bf16",
    "galore/none/f32",
    "adamw/none/f32",
    "scale_by_muon/tensor/f32",
    "muon/tensor/f32",
}
"""The wide survey's set-ups that the unit tests run (with the rest of the representative
part of the corpus)."""


def _set_up(name: str, factory: Factory, kind: str, precision: str, x64: bool) -> SetUp:
    full = f"{name}/{kind}/{precision}"
    return SetUp(
        full,
        lambda: _build(factory, kind, precision),
        x64=x64,
        representative=full in REPRESENTATIVE,
    )


def focus_set_ups() -> list[SetUp]:
    """The default corpus's share of the new kinds: :data:`FOCUS` on :data:`NEW_KINDS`."""
    return [_set_up(n, FACTORIES[n], *kind) for n in FOCUS for kind in NEW_KINDS]


def wide_set_ups(skip: set[str] | None = None) -> list[SetUp]:
    """Every factory of :data:`FACTORIES` on every tree of :data:`WIDE_KINDS`, but the
    names in ``skip`` (the corpus's own set-ups, run once)."""
    return [
        _set_up(name, factory, *kind)
        for name, factory in FACTORIES.items()
        for kind in WIDE_KINDS
        if skip is None or f"{name}/{kind[0]}/{kind[1]}" not in skip
    ]

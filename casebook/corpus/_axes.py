"""Three axes the survey's oracle does not cover, run on every factory of the wide survey.

The oracle (:func:`casebook.corpus.oracle`) runs a set-up's real ``init``, updates and
``lax.scan``; these axes ask what it does not (issue 33, item 7):

* **value dtype**: for the transformations whose ``update`` takes a ``value`` (or a line
  search's ``value`` and ``value_fn``), a loss in another dtype than the params (bf16 or
  f16 for f32 params, f32 for bf16 params; f64 under x64): does the state drift in a real
  ``lax.scan``, or do the updates leave the params' dtype?
* **donated state**: ``jax.jit(update, donate_argnums=1)`` over the state that ``init``
  returned, called with the params as well, as a training step that donates its optimizer
  state does: an ``init`` that stores the params' own arrays (or one array twice) in the
  state makes the first step fail;
* **live buffers**: an eager loop of updates (no ``jit``): does the number of live arrays
  (``jax.live_arrays()``) grow from step 10 to step 30?

Each returns :class:`AxisRow` per set-up; ``python -m casebook.corpus --axes`` prints the
problems. What it found on optax 0.2.8 and jax 0.12 (2026-11-26, 293 set-ups): no problem on
the value-dtype axis (also none under x64 with f64 losses, run by hand) nor on the
live-buffer axis; on the donated-state axis, 12: the ``init`` of ``dog``, ``dowg``,
``scale_by_distance_over_gradients``, ``prodigy``, ``madgrad`` (and ``scale_by_madgrad``),
``mechanize`` and ``sam`` hands back the params' own arrays in the state, and that of
``cocob`` (``scale_by_cocob``) and ``lbfgs`` (``scale_by_lbfgs``) one array twice, so the
first step that donates the state fails (``Attempt to use a buffer that was previously
donated``, ``Attempt to donate the same buffer twice``); copying the state once
(``jax.tree.map(jnp.copy, opt.init(params))``) avoids it. An independent test (does a
leaf of ``init``'s state share its array with the params or with another leaf?) names the
same 12 of the 137 set-ups: no false alarm, no miss. Written up as finding 10 of
``book/check-findings`` (the ``donation`` family of ``families.toml``); ``check_optimizer(...,
donate_state=True)`` finds it from the jaxpr of ``init`` (an output that is an input, or
one output twice), on the same 12.
"""

from __future__ import annotations

import gc
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import jax

from casebook.corpus._setups import PRECISIONS, quadratic
from casebook.corpus._wide import FACTORIES, _build, _line_search, _value

#: (params, value) precisions of the value-dtype axis; the f64 pairs only under x64.
VALUE_PAIRS = (("f32", "bf16"), ("bf16", "f32"), ("f32", "f16"))
VALUE_PAIRS_X64 = (("f32", "f64"), ("bf16", "f64"), ("f64", "f32"))


@dataclass(frozen=True)
class AxisRow:
    """One set-up on one axis: its name, what was varied, and the problem (``""``: none)."""

    axis: str
    name: str
    setting: str
    problem: str = ""


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0][:140] if text else ''}"


def _names(names: Iterable[str] | None, kinds: tuple[Any, ...] = ()) -> list[str]:
    chosen = list(FACTORIES) if names is None else list(names)
    return [n for n in chosen if not kinds or FACTORIES[n].kwargs in kinds]


def value_dtype(names: Iterable[str] | None = None) -> list[AxisRow]:
    """The value-dtype axis over the factories whose update takes a value."""
    rows = []
    pairs = VALUE_PAIRS_X64 if jax.config.jax_enable_x64 else VALUE_PAIRS
    for name in _names(names, (_value, _line_search)):
        factory = FACTORIES[name]
        for params_p, value_p in pairs:
            built = _build(factory, "dict", params_p)
            dtype = PRECISIONS[value_p]

            def loss(p: Any, dtype: Any = dtype) -> Any:
                return quadratic(p).astype(dtype)

            kwargs: dict[str, Any] = {"value": loss(built.params)}
            if factory.kwargs is _line_search:
                kwargs.update(grad=built.grads, value_fn=loss)
            rows.append(
                AxisRow(
                    "value dtype",
                    name,
                    f"{params_p} params, {value_p} value",
                    _drift(built, kwargs),
                )
            )
    return rows


def _drift(built: Any, kwargs: dict[str, Any]) -> str:
    """A real lax.scan of three updates, and the updates' dtypes: what went wrong."""
    opt, params, grads = built.optimizer, built.params, built.grads
    try:
        state = opt.init(params)

        def body(s: Any, _: Any) -> tuple[Any, Any]:
            return opt.update(grads, s, params, **kwargs)[1], None

        jax.jit(lambda s: jax.lax.scan(body, s, None, length=3)).lower(state)
        updates = opt.update(grads, state, params, **kwargs)[0]
    except Exception as error:
        return _first_line(error)
    leak = [
        f"{u.dtype} updates for {p.dtype} params"
        for u, p in zip(jax.tree.leaves(updates), jax.tree.leaves(params))
        if u.dtype != p.dtype
    ]
    return leak[0] if leak else ""


def _donated_step(built: Any) -> str:
    """The first jitted step that donates ``init``'s state: the donation's error, or ""."""
    opt, kwargs = built.optimizer, built.update_kwargs
    state = opt.init(built.params)
    step = jax.jit(lambda g, s, p: opt.update(g, s, p, **kwargs), donate_argnums=(1,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            step(built.grads, state, built.params)
        except Exception as error:
            if "donat" in str(error):
                return _first_line(error)
    return ""


def donated_state(names: Iterable[str] | None = None) -> list[AxisRow]:
    """The donated-state axis over the factories (those the survey cannot build skipped)."""
    rows = []
    for name in _names(names):
        try:
            built = _build(FACTORIES[name], "dict", "f32")
            problem = _donated_step(built)
        except Exception:  # init fails: the oracle's matter, not this axis's
            continue
        rows.append(AxisRow("donated state", name, "jit(update, donate_argnums=1)", problem))
    return rows


def live_buffers(names: Iterable[str] | None = None, steps: int = 30) -> list[AxisRow]:
    """The live-buffer axis: live arrays after step 10 and after step ``steps``."""
    rows = []
    for name in _names(names):
        try:
            built = _build(FACTORIES[name], "dict", "f32")
            opt, params = built.optimizer, built.params
            state = opt.init(params)
            counts = []
            for i in range(steps):
                state = opt.update(built.grads, state, params, **built.update_kwargs)[1]
                if i + 1 in (10, steps):
                    gc.collect()
                    counts.append(len(jax.live_arrays()))
        except Exception:  # a set-up that fails eagerly is the oracle's, not this axis's
            continue
        grew = counts[1] > counts[0]
        said = f"live arrays {counts[0]} at step 10, {counts[1]} at step {steps}"
        rows.append(AxisRow("live buffers", name, "eager updates", said if grew else ""))
    return rows


def main_axes(only: str = "", verbose: bool = False) -> int:
    """``python -m casebook.corpus --axes``: each axis's problems (every row with
    ``verbose``); 0 when none was found."""
    names = [n for n in FACTORIES if only in n]
    rows = [*value_dtype(names), *donated_state(names), *live_buffers(names)]
    for row in rows:
        if verbose or row.problem:
            print(f"{row.axis:13} {row.name:36} {row.setting:32} {row.problem or 'ok'}")
    bad = [r for r in rows if r.problem]
    print(f"{len(rows)} set-ups on 3 axes; {len(bad)} with a problem")
    return 1 if bad else 0

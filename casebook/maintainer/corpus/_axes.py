"""Three axes the survey's oracle does not cover, run on every factory of the wide survey.

The oracle (:func:`casebook.maintainer.corpus.oracle`) runs a set-up's real ``init``, updates and
``lax.scan``; these axes ask what it does not (issue 33, item 7):

* **value dtype**: the optimizers whose ``update`` takes a ``value`` (or a line search's
  ``value``, ``grad`` and ``value_fn``, with ``optax.value_and_grad_from_state`` where the
  state stores them), :data:`VALUE_TAKERS`, in a real training loop (three steps eagerly,
  and in a ``lax.scan``) with the params', the loss's and the grads' dtypes each bf16, f16
  or f32 (f64 too under x64), x64 off and on; the check is judged on each set-up;
* **donated state**: ``jax.jit(update, donate_argnums=1)`` over the state that ``init``
  returned, called with the params as well, as a training step that donates its optimizer
  state does: an ``init`` that stores the params' own arrays (or one array twice) in the
  state makes the first step fail;
* **live buffers**: an eager loop of updates (no ``jit``): does the number of live arrays
  (``jax.live_arrays()``) grow from step 10 to step 30?

Each returns :class:`AxisRow` per set-up; ``python -m casebook.maintainer.corpus --axes`` prints the
problems. What it found on optax 0.2.8 and jax 0.12 (2026-11-28). On the value-dtype axis,
1,001 set-ups (11 optimizers; 27 dtype triples without x64, 64 with it), each run eagerly
and in a scan (2,002 runs, 3 minutes on 2 cores): 434 fail. Most give the params grads of
another dtype (the wide survey's known mixed precision); the rest are finding 11 of
``book/check-findings``: ``value_and_grad_from_state`` (lbfgs, the zoom and backtracking
searches) whenever the loss's dtype is not the params', and the backtracking search's
``store_grad=True`` whenever the loss is not float32 (float64 under x64). The check: no
false alarm, 91 misses, all the crash inside ``value_and_grad_from_state``, which runs
before ``update``. (The axis before, one loss per params dtype, 24 set-ups, found nothing.)
No problem on the live-buffer axis; on the donated-state axis, 12: the ``init`` of ``dog``, ``dowg``,
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
import itertools
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import optax
import optax.contrib as contrib

from casebook.check import check_optimizer
from casebook.maintainer.corpus._setups import PRECISIONS
from casebook.maintainer.corpus._wide import FACTORIES, _build

#: The value-dtype axis's optimizers: what ``update`` takes besides the grads ("value"; a
#: line search's value, grad and value_fn; "from state": those, with value and grad from
#: ``optax.value_and_grad_from_state``). dog and dowg take ``value=`` in their docstrings.
VALUE_TAKERS: dict[str, tuple[Callable[[], Any], str]] = {
    "polyak_sgd": (optax.polyak_sgd, "value"),
    "scale_by_polyak": (optax.scale_by_polyak, "value"),
    "momo": (contrib.momo, "value"),
    "momo_adam": (contrib.momo_adam, "value"),
    "reduce_on_plateau": (
        lambda: optax.chain(optax.adam(1e-2), contrib.reduce_on_plateau()),
        "value",
    ),
    "dog": (contrib.dog, "value"),
    "dowg": (contrib.dowg, "value"),
    "lbfgs": (optax.lbfgs, "from state"),
    "scale_by_zoom_linesearch": (lambda: _ls(optax.scale_by_zoom_linesearch(15)), "from state"),
    "scale_by_backtracking_linesearch": (
        lambda: _ls(optax.scale_by_backtracking_linesearch(15)),
        "line search",
    ),
    "scale_by_backtracking_linesearch-store_grad": (
        lambda: _ls(optax.scale_by_backtracking_linesearch(15, store_grad=True)),
        "from state",
    ),
}
#: Each of the params', the value's and the grads' dtypes is one of these (f64: under x64).
VALUE_DTYPES = ("bf16", "f16", "f32", "f64")


def _ls(search: Any) -> Any:
    return optax.chain(optax.sgd(1e-2), search)


@dataclass(frozen=True)
class AxisRow:
    """One set-up on one axis: its name, what was varied, and the problem (``""``: none)."""

    axis: str
    name: str
    setting: str
    problem: str = ""
    alarm: str | None = None  # the check's verdict ("" none; None: not asked)


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0][:140] if text else ''}"


def _names(names: Iterable[str] | None, kinds: tuple[Any, ...] = ()) -> list[str]:
    chosen = list(FACTORIES) if names is None else list(names)
    return [n for n in chosen if not kinds or FACTORIES[n].kwargs in kinds]


def value_dtype(
    names: Iterable[str] | None = None,
    dtypes: Iterable[str] = VALUE_DTYPES,
    x64: Iterable[bool] = (False, True),
) -> list[AxisRow]:
    """The value-dtype axis: each of :data:`VALUE_TAKERS` in a real training loop (three
    steps eagerly, and in a ``lax.scan`` lowered by ``jit``) for every params, value (loss)
    and grads dtype, x64 off and on; each row has the check's verdict on the same set-up."""
    rows = []
    for name in [n for n in VALUE_TAKERS if names is None or n in names]:
        make, kind = VALUE_TAKERS[name]
        for on in x64:
            chosen = [d for d in dtypes if on or d != "f64"]
            for p, v, g in itertools.product(chosen, repeat=3):
                with jax.enable_x64(on):
                    alarm = _value_check(make(), kind, *(PRECISIONS[d] for d in (p, v, g)))
                    for mode in ("eager", "scan"):
                        problem = _value_run(
                            make(), kind, mode, *(PRECISIONS[d] for d in (p, v, g))
                        )
                        said = f"{p} params, {v} value, {g} grads{', x64' if on else ''}, {mode}"
                        rows.append(AxisRow("value dtype", name, said, problem, alarm))
    return rows


def _value_setup(kind: str, p: Any, v: Any, g: Any) -> tuple[Any, Callable[..., Any], Any]:
    """Params, the loss (in ``v``) and the (value, grads) of a step (grads in ``g``)."""
    params = {"w": jnp.arange(1.0, 5.0, dtype=p) / 4, "b": jnp.asarray([0.5, -0.25], p)}

    def loss(q: Any) -> Any:
        squares = [jnp.sum(jnp.square(x.astype(jnp.float32))) for x in jax.tree.leaves(q)]
        return jnp.sum(jnp.stack(squares)).astype(v)

    def value_and_grad(q: Any, state: Any) -> tuple[Any, Any]:
        if kind == "from state":
            value, grad = optax.value_and_grad_from_state(loss)(q, state=state)
        else:
            value, grad = jax.value_and_grad(lambda r: loss(r).astype(jnp.float32))(q)
        return value.astype(v), jax.tree.map(lambda x: x.astype(g), grad)

    return params, loss, value_and_grad


def _kwargs(kind: str, loss: Any, value: Any, grad: Any) -> dict[str, Any]:
    return {"value": value} if kind == "value" else {"value": value, "grad": grad, "value_fn": loss}


def _value_run(opt: Any, kind: str, mode: str, p: Any, v: Any, g: Any) -> str:
    """The first problem of a real training loop: an exception, or params that left ``p``."""
    params, loss, value_and_grad = _value_setup(kind, p, v, g)

    def step(carry: Any, _: Any = None) -> tuple[Any, None]:
        q, state = carry
        value, grad = value_and_grad(q, state)
        updates, state = opt.update(grad, state, q, **_kwargs(kind, loss, value, grad))
        return (optax.apply_updates(q, updates), state), None

    carry = (params, opt.init(params))
    try:
        if mode == "scan":
            jax.jit(lambda c: jax.lax.scan(step, c, None, length=3)).lower(carry)
        else:
            for _ in range(3):
                carry = step(carry)[0]
    except Exception as error:
        return _first_line(error)
    left = [x.dtype for x in jax.tree.leaves(carry[0]) if x.dtype != p]
    return f"params became {left[0]}" if left else ""


def _value_check(opt: Any, kind: str, p: Any, v: Any, g: Any) -> str:
    """The check's first problem on the set-up ("" when it finds none)."""
    params, loss, _ = _value_setup(kind, p, v, g)
    grads = jax.tree.map(lambda x: x.astype(g), params)
    kwargs = _kwargs(kind, loss, loss(params), grads)
    try:
        report = check_optimizer(opt, params, grads, update_kwargs=kwargs)
    except Exception as error:
        return f"raised {_first_line(error)}"
    return str(report.problems[0]) if report.problems else ""


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
    """``python -m casebook.maintainer.corpus --axes``: each axis's problems (every row with
    ``verbose``); 0 when none was found."""
    names = [n for n in [*FACTORIES, *VALUE_TAKERS] if only in n]
    rows = [*value_dtype(names), *donated_state(names), *live_buffers(names)]
    for row in rows:
        if verbose or row.problem:
            print(f"{row.axis:13} {row.name:36} {row.setting:32} {row.problem or 'ok'}")
    bad = [r for r in rows if r.problem]
    print(f"{len(rows)} runs on 3 axes (value dtype: eager and scan); {len(bad)} with a problem")
    judged: dict[tuple[str, str], list[AxisRow]] = {}  # a set-up fails in either mode
    for r in rows:
        if r.alarm is not None:
            judged.setdefault((r.name, r.setting.rsplit(", ", 1)[0]), []).append(r)
    alarms = [k for k, rs in judged.items() if rs[0].alarm and not any(r.problem for r in rs)]
    misses = [k for k, rs in judged.items() if not rs[0].alarm and any(r.problem for r in rs)]
    for label, keys in (("FALSE ALARM", alarms), ("MISS", misses)):
        for name, setting in keys:
            print(
                f"  {label} {name}, {setting}: {judged[name, setting][0].alarm or next(r.problem for r in judged[name, setting] if r.problem)}"
            )
    print(
        f"the check on {len(judged)} value-dtype set-ups: {len(alarms)} false alarm(s), {len(misses)} miss(es)"
    )
    return 1 if bad else 0

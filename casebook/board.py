"""The status board: today's state of every case and open problem on the pinned releases.

Each :class:`Trigger` is the smallest program that shows one bug, written so that its
outcome *is* the status: it raises (the bug still fails loudly), sets
``result = "silent"`` (it runs but computes the wrong thing, and the code checked that
against a reference), or sets ``result = "fixed"`` (it runs and the numbers are right).
:func:`run_board` runs them all on the current pins, each in a fresh subprocess
(:func:`casebook.releases.run`), and compares with the status recorded when the
trigger was written (``Trigger.recorded``), so a pin bump shows what changed.
"""

from __future__ import annotations

import html
import importlib.metadata as md
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from casebook import releases

__all__ = ["BOARD", "Board", "Row", "Trigger", "run_board"]

STATUSES = ("fixed", "still failing", "silent")

_SETUP_828 = """
import jax, jax.numpy as jnp, numpy as np, optax
opt = optax.MultiSteps(optax.chain(optax.zero_nans(), optax.sgd(1.0)), every_k_schedule=2)
params = jnp.zeros(3)
state, update = opt.init(params), jax.jit(opt.update)
"""

_SCAN = """
import jax, jax.numpy as jnp, optax
def scanned(opt, params, steps=2):
    step = lambda state, _: (opt.update(params, state, params)[1], None)
    return jax.lax.scan(step, opt.init(params), None, length=steps)[0]
"""
_FINDINGS = "book/check-findings"


@dataclass(frozen=True)
class Trigger:
    """One bug's smallest program, and the status it had when it was written here."""

    key: str
    title: str
    upstream: str   # the issue it comes from (URL), or "" for a problem with no report
    case: str       # the book page that tells its story (docname)
    code: str
    recorded: str   # one of STATUSES
    x64: bool = False
    found_by_check: bool = False  # found by the book's check (casebook.check), not by a report


BOARD: tuple[Trigger, ...] = (
    Trigger(
        "optax#828", "zero_nans() inside MultiSteps: bool state turns int32 under jit",
        "https://github.com/google-deepmind/optax/issues/828",
        "notebooks/01-optax-828-zero-nans-multisteps",
        _SETUP_828 + """
for g in ([1.0, 2.0, 3.0], [3.0, 2.0, 1.0]):
    u, state = update(jnp.array(g), state, params)
assert state.inner_opt_state[0].found_nan.dtype == jnp.bool_
np.testing.assert_array_equal(u, [-2.0, -2.0, -2.0])
result = "fixed"
""", "fixed"),
    Trigger(
        "optax#1373", "an Equinox module as the adamw mask under inject_hyperparams",
        "https://github.com/google-deepmind/optax/issues/1373",
        "notebooks/02-optax-1373-callable-mask-inject",
        """
import jax, jax.numpy as jnp, equinox as eqx, optax
class Net(eqx.Module):
    w: jax.Array
    b: jax.Array
    def __call__(self, x, y):
        return x
net = Net(jnp.ones((2, 2)), jnp.zeros(2))
mask = Net(True, False)
optax.inject_hyperparams(optax.adamw)(learning_rate=1e-3, mask=mask).init(net)
result = "fixed"
""", "still failing"),
    Trigger(
        "optax#1017", "optax.lbfgs on an Equinox model, update without params",
        "https://github.com/google-deepmind/optax/issues/1017",
        "notebooks/03-optax-1017-lbfgs-equinox",
        """
import jax, jax.numpy as jnp, equinox as eqx, optax
model = eqx.nn.MLP(2, 1, 4, 1, key=jax.random.key(0))
x, y = jnp.ones((8, 2)), jnp.zeros((8, 1))
loss = lambda m: jnp.mean((jax.vmap(m)(x) - y) ** 2)
opt = optax.lbfgs()
state = opt.init(eqx.filter(model, eqx.is_inexact_array))
grads = eqx.filter_grad(loss)(model)
opt.update(grads, state)  # the reporter's call: no params, no value, grad or value_fn
result = "fixed"
""", "still failing"),
    Trigger(
        "optax#1210", "optax.lbfgs under x64: the line-search counter changes dtype in a step",
        "https://github.com/google-deepmind/optax/issues/1210",
        "notebooks/04-optax-1210-lbfgs-x64-scan",
        """
import jax, jax.numpy as jnp, optax
f = lambda x: jnp.sum((1 - x[:-1]) ** 2 + 100 * (x[1:] - x[:-1] ** 2) ** 2)
opt = optax.lbfgs()
vg = optax.value_and_grad_from_state(f)
def step(carry):
    x, s = carry
    v, g = vg(x, state=s)
    u, s = opt.update(g, s, x, value=v, grad=g, value_fn=f)
    return optax.apply_updates(x, u), s
x = jnp.zeros(4)
carry = (x, opt.init(x))
carry = jax.jit(lambda c: jax.lax.cond(True, step, lambda c: c, c))(carry)
assert carry[1][2].info.num_linesearch_steps.dtype == jnp.int64
result = "fixed"
""", "fixed", x64=True),
    Trigger(
        "diffrax#521", "a model holding a PIDController passed whole to MultiSteps",
        "https://github.com/patrick-kidger/diffrax/issues/521",
        "notebooks/05-diffrax-521-pidcontroller-multisteps",
        """
import jax, jax.numpy as jnp, equinox as eqx, optax, diffrax
class Model(eqx.Module):
    w: jax.Array
    controller: diffrax.PIDController
model = Model(jnp.ones(2), diffrax.PIDController(rtol=1e-3, atol=1e-6))
opt = optax.MultiSteps(optax.adam(1e-3), every_k_schedule=2)
state = opt.init(eqx.filter(model, eqx.is_inexact_array))
grads = eqx.filter(model, eqx.is_inexact_array)
opt.update(grads, state, model)
result = "fixed"
""", "still failing"),
    Trigger(
        "sticky NaN", "MultiSteps: one NaN mini-batch freezes a coordinate for good "
        "(found in case 1; no upstream report)", "",
        "notebooks/01-optax-828-zero-nans-multisteps",
        _SETUP_828 + """
rows = []
for g in ([1, 2, 3], [1, float("nan"), 3], [3, 3, 3], [3, 3, 3]):
    u, state = update(jnp.array(g, jnp.float32), state, params)
    rows.append(u)
# zero_nans promises a zero update for the NaN cycle only; the next cycle is finite.
result = "silent" if float(rows[3][1]) == 0.0 else "fixed"
if result == "fixed":
    np.testing.assert_array_equal(rows[3], [-3.0, -3.0, -3.0])
""", "silent"),
    Trigger(
        "mask function", "inject_hyperparams(adamw)(mask=lambda p: ...): weight decay "
        "silently off (found in case 2)", "https://github.com/google-deepmind/optax/issues/1373",
        "notebooks/02-optax-1373-callable-mask-inject",
        """
import jax, jax.numpy as jnp, optax
params = {"w": jnp.ones((2, 2)), "b": jnp.ones(2)}
grads = jax.tree.map(jnp.zeros_like, params)
kw = dict(learning_rate=1.0, weight_decay=0.5)
mask = lambda p: jax.tree.map(lambda x: x.ndim > 1, p)
got, _ = optax.inject_hyperparams(optax.adamw)(mask=mask, **kw).update(
    grads, optax.inject_hyperparams(optax.adamw)(mask=mask, **kw).init(params), params)
want, _ = optax.adamw(mask=mask, **kw).update(grads, optax.adamw(mask=mask, **kw).init(params), params)
assert float(want["w"][0, 0]) == -0.5 and float(want["b"][0]) == 0.0  # the reference decays w
result = "fixed" if float(got["w"][0, 0]) == -0.5 else "silent"
""", "silent"),
    Trigger(
        "monitor state", "optax.monitor: the state's measurements go from {} to {name: value} "
        "in the first update", "", _FINDINGS, _SCAN + """
state = scanned(optax.monitor({"norm": optax.tree.norm}), jnp.ones(4))
assert float(state.measurements["norm"]) == 2.0
result = "fixed"
""", "still failing", found_by_check=True),
    Trigger(
        "DoG bf16", "scale_by_distance_over_gradients on bf16 params: max_dist turns float32",
        "", _FINDINGS, _SCAN + """
state = scanned(optax.scale_by_distance_over_gradients(), jnp.ones(4, jnp.bfloat16))
assert state.max_dist.dtype == jnp.bfloat16
result = "fixed"
""", "still failing", found_by_check=True),
    Trigger(
        "inject dtype", "inject_hyperparams(adamw, hyperparam_dtype=float32) on bf16 params: "
        "mu turns float32", "", _FINDINGS, _SCAN + """
opt = optax.inject_hyperparams(optax.adamw, hyperparam_dtype=jnp.float32)(learning_rate=1e-3)
state = scanned(opt, jnp.ones(4, jnp.bfloat16))
assert state.inner_state[0].mu.dtype == jnp.bfloat16
result = "fixed"
""", "still failing", found_by_check=True),
    Trigger(
        "lars/muon masks", "inject_hyperparams(lars or muon)(weight_decay_mask=fn): weight "
        "decay silently off", "", _FINDINGS, """
import jax, jax.numpy as jnp, optax
params = {"w": jnp.ones((3, 3)), "b": jnp.ones(3)}
grads = jax.tree.map(jnp.zeros_like, params)
kw = dict(learning_rate=1.0, weight_decay=0.5,
          weight_decay_mask=lambda p: jax.tree.map(lambda x: x.ndim > 1, p))
def first_update(opt):
    return opt.update(grads, opt.init(params), params)[0]
same = []
for factory in (optax.lars, optax.contrib.muon):
    want, got = first_update(factory(**kw)), first_update(optax.inject_hyperparams(factory)(**kw))
    assert float(jnp.abs(want["w"]).max()) > 0 and float(jnp.abs(want["b"]).max()) == 0
    same.append(all(bool(jnp.allclose(want[k], got[k])) for k in want))
result = "fixed" if all(same) else "silent"
""", "silent", found_by_check=True),
)


@dataclass(frozen=True)
class Row:
    """A trigger and what it did on the pins: ``status`` and a one-line ``detail``."""

    trigger: Trigger
    status: str
    detail: str

    @property
    def changed(self) -> bool:
        return self.status != self.trigger.recorded


def _status(outcome: releases.Outcome) -> tuple[str, str]:
    if not outcome.ok:
        line = f"{outcome.exc_type}: {outcome.message.splitlines()[0]}"
        return "still failing", line if len(line) <= 120 else line[:117] + "..."
    if outcome.result == "fixed":
        return "fixed", "runs, and the result matches the reference"
    if outcome.result == "silent":
        return "silent", "runs without an error, but the result differs from the reference"
    return "unexpected", f"the trigger ended without a status (result={outcome.result!r})"


class Board(list[Row]):
    """The rows of :func:`run_board`; a table as text and HTML (with links)."""

    def __init__(self, rows: Sequence[Row], versions: str) -> None:
        super().__init__(rows)
        self.versions = versions

    @property
    def changed(self) -> list[Row]:
        """Rows whose status differs from the one recorded with the trigger."""
        return [r for r in self if r.changed]

    def __str__(self) -> str:
        lines = [f"status on {self.versions}"]
        for r in self:
            flag = f"  (was {r.trigger.recorded})" if r.changed else ""
            found = " [found by the book's check]" if r.trigger.found_by_check else ""
            lines.append(f"{r.trigger.key:15} {r.status:14} {r.trigger.title}{found}{flag}")
        return "\n".join(lines)

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(str(self))

    def _repr_html_(self) -> str:
        colors = {"fixed": "#1a7f37", "still failing": "#cf222e", "silent": "#9a6700"}
        body = []
        for r in self:
            t = r.trigger
            key = (f'<a href="{html.escape(t.upstream)}">{html.escape(t.key)}</a>' if t.upstream
                   else html.escape(t.key))
            page = html.escape(t.case.split("/")[-1] + ".html")
            status = (f'<b style="color:{colors.get(r.status, "black")}">{html.escape(r.status)}</b>'
                      + (f"<br>changed: was {html.escape(t.recorded)}" if r.changed else ""))
            found = " <i>(found by the book's check)</i>" if t.found_by_check else ""
            body.append(f"<tr><td>{key}</td><td>{html.escape(t.title)}{found} "
                        f'(<a href="{page}">case</a>)</td><td>{status}</td>'
                        f"<td><code>{html.escape(r.detail)}</code></td></tr>")
        return (f"<table><caption>{html.escape(self.versions)}</caption><thead><tr><th>bug</th>"
                "<th>what</th><th>status</th><th>what the trigger did</th></tr></thead>"
                f"<tbody>{''.join(body)}</tbody></table>")


def run_board(triggers: Sequence[Trigger] = BOARD, *, workers: int = 2) -> Board:
    """Run every trigger on the current pins (fresh CPU subprocesses, in parallel)."""
    def one(t: Trigger) -> releases.Outcome:
        return releases.run(t.code, releases.CURRENT, x64=t.x64, timeout=120)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        outcomes = list(pool.map(one, triggers))
    rows = [Row(t, *_status(o)) for t, o in zip(triggers, outcomes)]
    pins = ", ".join(f"{p} {md.version(p)}" for p in ("jax", "optax", "equinox", "diffrax"))
    return Board(rows, pins)

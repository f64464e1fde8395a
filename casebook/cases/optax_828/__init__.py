"""Case 1, optax#828: ``zero_nans()`` inside ``MultiSteps``; a bool state leaf turns int32.

The card, the errors the notebook asserts, the board's two rows (the bug, and the sticky
NaN that case 1 found in the same code) and the set-up the lessons page checks.
"""

from __future__ import annotations

from typing import Any

from casebook.cases._base import Case, CheckSetup, ExpectedError, Message, Trigger, read_issue

DOCNAME = "notebooks/01-optax-828-zero-nans-multisteps"
ISSUE = read_issue(__file__)
URL = ISSUE.url

# The jitted MultiSteps(zero_nans, sgd) update that both board rows start from.
_SETUP = """
import jax, jax.numpy as jnp, numpy as np, optax
opt = optax.MultiSteps(optax.chain(optax.zero_nans(), optax.sgd(1.0)), every_k_schedule=2)
params = jnp.zeros(3)
state, update = opt.init(params), jax.jit(opt.update)
"""

TRIGGERS = (
    Trigger(
        "optax#828",
        "zero_nans() inside MultiSteps: bool state turns int32 under jit",
        URL,
        DOCNAME,
        _SETUP
        + """
for g in ([1.0, 2.0, 3.0], [3.0, 2.0, 1.0]):
    u, state = update(jnp.array(g), state, params)
assert state.inner_opt_state[0].found_nan.dtype == jnp.bool_
np.testing.assert_array_equal(u, [-2.0, -2.0, -2.0])
result = "fixed"
""",
        "fixed",
    ),
    Trigger(
        "sticky NaN",
        "MultiSteps: one NaN mini-batch freezes a coordinate for good "
        "(found in case 1; no upstream report)",
        "",
        DOCNAME,
        _SETUP
        + """
rows = []
for g in ([1, 2, 3], [1, float("nan"), 3], [3, 3, 3], [3, 3, 3]):
    u, state = update(jnp.array(g, jnp.float32), state, params)
    rows.append(u)
# zero_nans promises a zero update for the NaN cycle only; the next cycle is finite.
result = "silent" if float(rows[3][1]) == 0.0 else "fixed"
if result == "fixed":
    np.testing.assert_array_equal(rows[3], [-3.0, -3.0, -3.0])
""",
        "silent",
    ),
)


# The reporter's trigger, as the page's repro runs it (jit), and through eval_shape.
_REPRO = """import jax, jax.numpy as jnp, optax

opt = optax.MultiSteps(optax.chain(optax.zero_nans(), optax.sgd(0.1)), every_k_schedule=2)
params = {"w": jnp.ones(3)}
state = opt.init(params)
jax.jit(opt.update)({"w": jnp.ones(3)}, state, params)
"""
_EVAL_SHAPE = _REPRO.replace(
    'jax.jit(opt.update)({"w": jnp.ones(3)}, state, params)',
    'jax.eval_shape(opt.update, {"w": jnp.ones(3)}, state, params)',
)
# The same merge on another bool leaf: apply_if_finite's last_finite (exercise 1).
_APPLY_IF_FINITE = """import jax, jax.numpy as jnp, optax

opt = optax.MultiSteps(optax.apply_if_finite(optax.sgd(0.1), 3), every_k_schedule=2)
params = {"w": jnp.ones(3)}
jax.eval_shape(opt.update, params, opt.init(params), params)
"""
# The same drift with no optax: a bool flag against `1 - flag` (a weak int32), through
# jax's four checks of output types (the page's record runs them on every era and today).
_BOOL = "jax.numpy.bool_(True)"
_COND = f"import jax; jax.lax.cond(True, lambda f: f, lambda f: 1 - f, {_BOOL})"
_SCAN = f"import jax; jax.lax.scan(lambda f, _: (1 - f, None), {_BOOL}, None, length=2)"
_WHILE = f"import jax; jax.lax.while_loop(lambda f: False, lambda f: 1 - f, {_BOOL})"
_SWITCH = f"import jax; jax.lax.switch(0, [lambda f: f, lambda f: 1 - f], {_BOOL})"
_BOOL_SUB = "import jax.numpy as jnp\n\nflags = jnp.array([True, False])\nflags - flags\n"
# What the cast of optax 0.2.7's merge adds (a drifting state: fails on 0.2.0) and costs
# (a Python-float state under disable_jit: fails on today's release).
_DRIFT = """import jax, jax.numpy as jnp, optax

drift = lambda u, s, p=None: (u, s.astype(jnp.float32) + 1.0)
drifting = optax.GradientTransformation(lambda p: jnp.zeros((), jnp.float16), drift)
opt = optax.MultiSteps(optax.chain(drifting, optax.sgd(1.0)), every_k_schedule=2)
params = {"w": jnp.ones(3)}
jax.jit(opt.update)(params, opt.init(params), params)
"""
_PYTHON_FLOAT = """import jax, jax.numpy as jnp, optax

python_float = optax.GradientTransformation(lambda p: 0.5, lambda u, s, p=None: (u, s))
opt = optax.MultiSteps(optax.chain(python_float, optax.sgd(1.0)), every_k_schedule=2)
params = {"w": jnp.ones(3)}
with jax.disable_jit():
    opt.update(params, opt.init(params), params)
"""

_COND_NOW = "cond branches must have equal output types but they differ."
_DUMP = "DIFFERENT ShapedArray(bool[]) vs. ShapedArray(int32[], weak_type=True)."
_CARRY = (
    "The input carry f has type bool[] but the corresponding output carry component has "
    "type int32[], so the dtypes do not match."
)
_EG = " (e.g. shapes and dtypes of arrays)"
_LOOP = " body function carry input and carry output must have equal types"
_MULTISTEPS = "jax.jit(MultiSteps.update), zero_nans() in the inner chain"
_TODAY = "jax 0.6.2 to 0.12 (today)"

# Every wording the page asserts, where it asserts it. ``today`` marks the wordings printed
# on today's jax (stack "current", or an old optax overlaid on today's jax); the first is
# the card's. jax's path lines (``true_fun is _skip_update at .../wrappers.py:423``) name
# a file that differs from machine to machine, so those texts stop at the first line.
MESSAGES = (
    Message(
        _COND_NOW,
        "TypeError",
        "optax==0.1.9",
        "optax 0.1.9 on jax 0.12 (today)",
        _REPRO,
        _MULTISTEPS,
        "case1-repro",
        today=True,
    ),
    Message(
        _COND_NOW,
        "TypeError",
        "optax==0.1.8",
        "optax 0.1.8 on jax 0.12 (today)",
        _REPRO,
        _MULTISTEPS,
        "case1-releases",
        today=True,
    ),
    Message(
        _COND_NOW,
        "TypeError",
        "optax==0.1.9",
        "optax 0.1.9 on jax 0.12 (today)",
        _EVAL_SHAPE,
        "jax.eval_shape(MultiSteps.update), zero_nans() in the inner chain",
        "case1-releases",
        today=True,
    ),
    Message(
        "true_fun and false_fun output must have identical types, got\n"
        "({'w': 'ShapedArray(float32[3])'}, MultiStepsState(mini_step='ShapedArray(int32[])', "
        "gradient_step='ShapedArray(int32[])', inner_opt_state=(ZeroNansState(found_nan={'w': "
        "'DIFFERENT ShapedArray(bool[]) vs. ShapedArray(int32[], weak_type=True)'}), "
        "(EmptyState(), EmptyState())), acc_grads={'w': 'ShapedArray(float32[3])'}, "
        "skip_state=())).",
        "TypeError",
        "era:optax-828",
        "optax 0.1.9 on jax 0.4.25 (the reporter's stack)",
        _REPRO,
        _MULTISTEPS,
        "case1-era",
    ),
    Message(
        _COND_NOW,
        "TypeError",
        "optax==0.1.9",
        "optax 0.1.9 on jax 0.12 (today)",
        _APPLY_IF_FINITE,
        "jax.eval_shape(MultiSteps.update), apply_if_finite inside",
        "case1-ex1",
        today=True,
    ),
    Message(
        "true_fun and false_fun output must have identical types, got\n" + _DUMP,
        "TypeError",
        "era:optax-828",
        "jax 0.4.25 to 0.4.35",
        _COND,
        "lax.cond",
        "case1-wordings",
    ),
    Message(
        "true_fun output and false_fun output must have identical types, got\n" + _DUMP,
        "TypeError",
        "era:optax-1210",
        "jax 0.5.1",
        _COND,
        "lax.cond",
        "case1-wordings",
    ),
    Message(
        _COND_NOW, "TypeError", "current", _TODAY, _COND, "lax.cond", "case1-wordings", today=True
    ),
    Message(
        "Scanned function carry input and carry output must have equal types"
        + _EG
        + ", but they differ:\n  * the input carry f has type bool[] but the corresponding "
        "output carry component has type int32[], so the dtypes do not match",
        "TypeError",
        "era:optax-828",
        "jax 0.4.25 to 0.4.30",
        _SCAN,
        "lax.scan",
        "case1-neighbours",
    ),
    Message(
        "scan" + _LOOP + _EG + ", but they differ:\n\n" + _CARRY,
        "TypeError",
        "era:optax-1210",
        "jax 0.4.35 to 0.5.1",
        _SCAN,
        "lax.scan",
        "case1-neighbours",
    ),
    Message(
        "scan" + _LOOP + ", but they differ:\n\n" + _CARRY,
        "TypeError",
        "current",
        _TODAY,
        _SCAN,
        "lax.scan",
        "case1-neighbours",
        today=True,
    ),
    Message(
        "body_fun output and input must have identical types, got\n"
        "DIFFERENT ShapedArray(int32[], weak_type=True) vs. ShapedArray(bool[]).",
        "TypeError",
        "era:optax-828",
        "jax 0.4.25 to 0.4.30",
        _WHILE,
        "lax.while_loop",
        "case1-neighbours",
    ),
    Message(
        "while_loop" + _LOOP + _EG + ", but they differ:\n\n" + _CARRY,
        "TypeError",
        "era:optax-1210",
        "jax 0.4.35 to 0.5.1",
        _WHILE,
        "lax.while_loop",
        "case1-neighbours",
    ),
    Message(
        "while_loop" + _LOOP + ", but they differ:\n\n" + _CARRY,
        "TypeError",
        "current",
        _TODAY,
        _WHILE,
        "lax.while_loop",
        "case1-neighbours",
        today=True,
    ),
    Message(
        "branch 0 and 1 outputs must have identical types, got\n" + _DUMP,
        "TypeError",
        "era:optax-828",
        "jax 0.4.25 to 0.4.35",
        _SWITCH,
        "lax.switch",
        "case1-neighbours",
    ),
    Message(
        "branch 0 output and branch 1 output must have identical types, got\n" + _DUMP,
        "TypeError",
        "era:optax-1210",
        "jax 0.5.1",
        _SWITCH,
        "lax.switch",
        "case1-neighbours",
    ),
    Message(
        "switch branches must have equal output types but they differ.",
        "TypeError",
        "current",
        _TODAY,
        _SWITCH,
        "lax.switch",
        "case1-neighbours",
        today=True,
    ),
    Message(
        "sub does not accept dtype bool at position 0. Accepted dtypes at position 0 are "
        "subtypes of integer, complexfloating, floating.",
        "TypeError",
        "current",
        "jax 0.12 (today)",
        _BOOL_SUB,
        "bool - bool (jax arrays)",
        "case1-rules",
        today=True,
    ),
    Message(
        _COND_NOW,
        "TypeError",
        "optax==0.2.0",
        "optax 0.2.0 on jax 0.12 (today)",
        _DRIFT,
        "jax.jit(MultiSteps.update), an inner state whose dtype changes in update",
        "case1-cast",
        today=True,
    ),
    Message(
        "'float' object has no attribute 'dtype'",
        "AttributeError",
        "current",
        "optax 0.2.8 on jax 0.12 (today)",
        _PYTHON_FLOAT,
        "MultiSteps.update under jax.disable_jit(), a Python float as inner state",
        "case1-cast",
        today=True,
    ),
)

# The card's "Do this": the page's cell after the repro, verbatim (it runs on its own).
FIX = """import jax
import jax.numpy as jnp
import optax

# optax >= 0.2.0: zero_nans() inside MultiSteps traces, jits and accumulates.
opt = optax.MultiSteps(optax.chain(optax.zero_nans(), optax.sgd(0.1)), every_k_schedule=2)
params = {"w": jnp.ones(3)}
state = opt.init(params)


@jax.jit
def step(params, state, batch):
    grads = jax.grad(lambda p: 0.5 * jnp.sum((p["w"] - batch) ** 2))(params)
    updates, state = opt.update(grads, state, params)
    return optax.apply_updates(params, updates), state


for batch in (jnp.zeros(3), jnp.ones(3)):  # two mini-batches, one sgd step
    params, state = step(params, state, batch)
print(params["w"], state.inner_opt_state[0].found_nan["w"].dtype)"""

# The card's "Why" and "Still open", verbatim (one paragraph each, one line on the page).
WHY = (
    "optax 0.1.8 and 0.1.9 merge the inner optimizer's state with arithmetic, `(1 - emit) * "
    "st + emit * nst`, and arithmetic with the Python `1` turns the bool `found_nan` of "
    "`zero_nans()` into a weak int32. `MultiSteps.update` runs inside a `lax.cond`, whose two "
    "branches must return identical types; the branch that skips the update hands the bool "
    "back unchanged, so jax rejects the pair while tracing, before anything runs. optax 0.2.0 "
    "selects instead, `jnp.where(emit, nst, st)`, which keeps every dtype."
)
STILL_OPEN = (
    "A NaN in one mini-batch freezes that coordinate for good on today's release (the sticky "
    "NaN): `MultiSteps` still resets its gradient accumulator with `(1 - emit) * acc`, and `0 "
    "* NaN` is NaN, so with `zero_nans()` inside the chain every later update of that "
    "coordinate is silently zero, and without it the NaN also leaks into the updates of the "
    "mini-steps that should hand out zeros. Put `zero_nans()` before `MultiSteps` instead "
    "(`optax.chain(optax.zero_nans(), optax.MultiSteps(...).gradient_transformation())`), or "
    "pass `should_skip_update_fn=optax.skip_not_finite`; both recover. Since optax 0.2.7 the "
    "merge also casts each leaf back to its old dtype: an inner state whose dtype drifts now "
    "passes silently, and a Python-float state fails under `jax.disable_jit()`."
)


def zero_nans_in_multisteps() -> dict[str, Any]:
    """The reporter's set-up: ``MultiSteps`` around ``chain(zero_nans(), sgd)``."""
    import jax.numpy as jnp
    import optax

    opt = optax.MultiSteps(optax.chain(optax.zero_nans(), optax.sgd(0.1)), every_k_schedule=2)
    return {"optimizer": opt, "params": {"w": jnp.ones(3)}}


CASE = Case(
    number=1,
    key="optax-828",
    issue=ISSUE,
    libraries=("optax", "jax"),
    affected=("optax==0.1.8", "optax==0.1.9"),
    first_fixed="optax==0.2.0",
    fix_commits=("6de95bf", "c02332eb"),
    docname=DOCNAME,
    summary="`zero_nans()` inside `MultiSteps`: bool state turned int32",
    errors=(
        ExpectedError(
            "jit(MultiSteps.update)",
            "TypeError",
            r"found_nan\['w'\] .*bool.*int32",
            "lax.cond in MultiSteps.update, while jit traces it",
            "optax==0.1.9",
        ),
        ExpectedError(
            "jit(MultiSteps.update), in the reporter's stack (jax 0.4.25)",
            "TypeError",
            r"^true_fun and false_fun output must have identical types, got\n.*found_nan="
            r"\{'w': 'DIFFERENT ShapedArray\(bool\[\]\) vs\. ShapedArray\(int32\[\], weak_type=True\)'\}",
            "lax.cond in MultiSteps.update (optax/_src/wrappers.py:435), while jit traces it",
            "era:optax-828",
        ),
    ),
    triggers=TRIGGERS,
    checks=(
        CheckSetup("zero_nans in MultiSteps", True, zero_nans_in_multisteps, "optax==0.1.9"),
        CheckSetup("zero_nans in MultiSteps, fixed", False, zero_nans_in_multisteps),
    ),
    messages=MESSAGES,
    fix=FIX,
    why=WHY,
    still_open=STILL_OPEN,
)

"""Case 4, optax#1210: ``optax.lbfgs`` under x64 in a scan; an int64 counter comes back int32.

The card, the errors the notebook asserts, the board's row and the set-up the lessons page
checks (on the buggy release and on the current one, both in 64-bit mode).
"""

from __future__ import annotations

from typing import Any

from casebook.cases._base import Case, CheckSetup, ExpectedError, Message, Trigger, read_issue

DOCNAME = "notebooks/04-optax-1210-lbfgs-x64-scan"
ISSUE = read_issue(__file__)
URL = ISSUE.url

TRIGGERS = (
    Trigger(
        "optax#1210",
        "optax.lbfgs under x64: the line-search counter changes dtype in a step",
        URL,
        DOCNAME,
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
""",
        "fixed",
        x64=True,
    ),
)


# The reporter's program, as the page's repro cell runs it (on optax 0.2.4, and in the
# reporter's stack): a checkpointed equinox scan over L-BFGS steps, in 64-bit mode.
_REPORTER = """import jax
import jax.numpy as jnp
import optax
import equinox.internal as eqxi

jax.config.update("jax_enable_x64", True)

def f(x):
    return jnp.sum(x**2)

params = jnp.array([1.0, 2.0, 3.0])
solver = optax.lbfgs()
opt_state = solver.init(params)

def body(carry, _):
    params, opt_state = carry
    value, grad = jax.value_and_grad(f)(params)
    updates, opt_state = solver.update(grad, opt_state, params, value=value, grad=grad, value_fn=f)
    params = optax.apply_updates(params, updates)
    return (params, opt_state), None

(params, opt_state), _ = eqxi.scan(body, (params, opt_state), None, length=100, kind=("checkpoint"))
"""

# The same step through jax's own loops: `carry` as `init` returns it (its counter weakly
# typed) and `restored`, the same after a NumPy round trip (a checkpoint; strongly typed).
_STEP = """import jax
import jax.numpy as jnp
import numpy as np
import optax

jax.config.update("jax_enable_x64", True)


def f(x):
    return jnp.sum(x**2)


solver = optax.lbfgs()


def step(carry):
    params, opt_state = carry
    value, grad = jax.value_and_grad(f)(params)
    updates, opt_state = solver.update(grad, opt_state, params, value=value, grad=grad, value_fn=f)
    return optax.apply_updates(params, updates), opt_state


params = jnp.array([1.0, 2.0, 3.0])
carry = (params, solver.init(params))
restored = jax.tree.map(lambda a: jnp.asarray(np.asarray(a)), carry)  # a checkpoint round trip
"""
_COND = _STEP + "jax.lax.cond(True, step, lambda carry: carry, carry)\n"
_SWITCH = _STEP + "jax.lax.switch(0, [step, lambda carry: carry], carry)\n"
_SCAN = _STEP + "jax.lax.scan(lambda carry, _: (step(carry), None), restored, length=3)\n"
_WHILE = _STEP + "jax.lax.while_loop(lambda carry: True, step, restored)\n"
_FORI = _STEP + "jax.lax.fori_loop(0, 3, lambda i, carry: step(carry), restored)\n"

# What the fixes do not cover: a state saved by a run without x64, restored into one with it.
_RESTORED_X32 = """import jax
import jax.numpy as jnp
import numpy as np
import optax

solver = optax.lbfgs()
saved = jax.tree.map(np.asarray, solver.init(jnp.zeros(3)))  # written by a run without x64

jax.config.update("jax_enable_x64", True)


def f(x):
    return jnp.sum(x**2)


def body(carry, _):
    params, opt_state = carry
    value, grad = jax.value_and_grad(f)(params)
    updates, opt_state = solver.update(grad, opt_state, params, value=value, grad=grad, value_fn=f)
    return (optax.apply_updates(params, updates), opt_state), None


params = jnp.array([1.0, 2.0, 3.0])
opt_state = jax.tree.map(jnp.asarray, saved)  # the checkpoint, restored with x64 on
jax.lax.scan(body, (params, opt_state), length=10)
"""

_EQX_DIFF = (
    "`body_fun` must have the same input and output structure. Difference is:\n"
    "  (\n"
    "    i64[],\n"
    "    (\n"
    "      f64[3],\n"
    "      (\n"
    "        ScaleByLBFGSState(\n"
    "          count=i32[],\n"
    "          params=f64[3],\n"
    "          updates=f64[3],\n"
    "          diff_params_memory=f64[10,3],\n"
    "          diff_updates_memory=f64[10,3],\n"
    "          weights_memory=f64[10]\n"
    "        ),\n"
    "        EmptyState(),\n"
    "        ScaleByZoomLinesearchState(\n"
    "          learning_rate=f64[],\n"
    "          value=f64[],\n"
    "          grad=f64[3],\n"
    "          info=ZoomLinesearchInfo(\n"
    "-           num_linesearch_steps=i64[],\n"
    "+           num_linesearch_steps=i32[],\n"
)
_TREE_DUMP = (
    "('ShapedArray(float64[3])', (ScaleByLBFGSState(count='ShapedArray(int32[])', "
    "params='ShapedArray(float64[3])', updates='ShapedArray(float64[3])', "
    "diff_params_memory='ShapedArray(float64[10,3])', "
    "diff_updates_memory='ShapedArray(float64[10,3])', "
    "weights_memory='ShapedArray(float64[10])'), EmptyState(), "
    "ScaleByZoomLinesearchState(learning_rate='ShapedArray(float64[], weak_type=True)', "
    "value='ShapedArray(float64[])', grad='ShapedArray(float64[3])', "
    "info=ZoomLinesearchInfo(num_linesearch_steps='DIFFERENT ShapedArray(int32[]) vs. "
    "ShapedArray(int64[], weak_type=True)', decrease_error='ShapedArray(float64[])', "
    "curvature_error='ShapedArray(float64[])'))))."
)
_EG = " (e.g. shapes and dtypes of arrays)"


def _carry(loop: str, path: str, era: bool) -> str:
    """jax's carry check, first three lines: the loop, then the counter's path and types."""
    return (
        f"{loop} body function carry input and carry output must have equal types"
        f"{_EG if era else ''}, but they differ:\n\n"
        f"The input carry component {path}.info.num_linesearch_steps has type int64[] but the "
        "corresponding output carry component has type int32[], so the dtypes do not match."
    )


_ERA = "jax 0.5.1 with optax 0.2.4 (the reporter's stack)"
_TODAY = "jax 0.12 (today) with optax 0.2.4"

# Every wording the page asserts, where it asserts it. ``today`` marks the wordings printed
# on today's jax (an old optax overlaid on it, or today's optax); the first is the card's.
# Today's `cond` and `switch` name each branch's file and line after their first line, so
# those texts stop at the first line.
MESSAGES = (
    Message(
        _EQX_DIFF,
        "ValueError",
        "optax==0.2.4",
        _TODAY + " and equinox 0.13.8",
        _REPORTER,
        "equinox.internal.scan, kind='checkpoint' (the report)",
        "case4-repro",
        today=True,
    ),
    Message(
        _EQX_DIFF,
        "ValueError",
        "era:optax-1210",
        _ERA + " and equinox 0.11.12",
        _REPORTER,
        "equinox.internal.scan, kind='checkpoint' (the report)",
        "case4-wordings",
    ),
    Message(
        "cond branches must have equal output types but they differ.",
        "TypeError",
        "optax==0.2.4",
        _TODAY,
        _COND,
        "lax.cond (take a step or keep the state)",
        "case4-wordings",
        today=True,
    ),
    Message(
        "true_fun output and false_fun output must have identical types, got\n" + _TREE_DUMP,
        "TypeError",
        "era:optax-1210",
        _ERA,
        _COND,
        "lax.cond (take a step or keep the state)",
        "case4-wordings",
    ),
    Message(
        "switch branches must have equal output types but they differ.",
        "TypeError",
        "optax==0.2.4",
        _TODAY,
        _SWITCH,
        "lax.switch (take a step or keep the state)",
        "case4-wordings",
        today=True,
    ),
    Message(
        "branch 0 output and branch 1 output must have identical types, got\n" + _TREE_DUMP,
        "TypeError",
        "era:optax-1210",
        _ERA,
        _SWITCH,
        "lax.switch (take a step or keep the state)",
        "case4-wordings",
    ),
    Message(
        _carry("scan", "carry[1][2]", era=False),
        "TypeError",
        "optax==0.2.4",
        _TODAY,
        _SCAN,
        "lax.scan on a restored state",
        "case4-wordings",
        today=True,
    ),
    Message(
        _carry("scan", "carry[1][2]", era=True),
        "TypeError",
        "era:optax-1210",
        _ERA,
        _SCAN,
        "lax.scan on a restored state",
        "case4-wordings",
    ),
    Message(
        _carry("while_loop", "carry[1][2]", era=False),
        "TypeError",
        "optax==0.2.4",
        _TODAY,
        _WHILE,
        "lax.while_loop on a restored state",
        "case4-wordings",
        today=True,
    ),
    Message(
        _carry("while_loop", "carry[1][2]", era=True),
        "TypeError",
        "era:optax-1210",
        _ERA,
        _WHILE,
        "lax.while_loop on a restored state",
        "case4-wordings",
    ),
    Message(
        _carry("scan", "loop_carry[1][1][2]", era=False),
        "TypeError",
        "optax==0.2.4",
        _TODAY,
        _FORI,
        "lax.fori_loop on a restored state (a fixed trip count runs as a scan)",
        "case4-wordings",
        today=True,
    ),
    Message(
        _carry("scan", "loop_carry[1][1][2]", era=True),
        "TypeError",
        "era:optax-1210",
        _ERA,
        _FORI,
        "lax.fori_loop on a restored state (a fixed trip count runs as a scan)",
        "case4-wordings",
    ),
    Message(
        "scan body function carry input and carry output must have equal types, but they "
        "differ:\n\n"
        "  * the input carry component carry[1][0].params has type float32[3] but the "
        "corresponding output carry component has type float64[3], so the dtypes do not match;\n"
        "  * the input carry component carry[1][0].updates has type float32[3] but the "
        "corresponding output carry component has type float64[3], so the dtypes do not match.",
        "TypeError",
        "current",
        "jax 0.12 with optax 0.2.8 (today; not covered by the fixes)",
        _RESTORED_X32,
        "lax.scan over a state saved without x64, restored with x64 on",
        "case4-open",
        today=True,
    ),
)

# The card's "Do this": the reporter's loop on optax 0.2.5 or later (a page cell, verbatim).
FIX = """import equinox.internal as eqxi
import jax
import jax.numpy as jnp
import optax  # 0.2.5 or later: the line search keeps the counter's dtype

jax.config.update("jax_enable_x64", True)


def f(x):
    return jnp.sum(x**2)


params = jnp.array([1.0, 2.0, 3.0])
solver = optax.lbfgs()
opt_state = solver.init(params)


def body(carry, _):
    params, opt_state = carry
    value, grad = jax.value_and_grad(f)(params)
    updates, opt_state = solver.update(grad, opt_state, params, value=value, grad=grad, value_fn=f)
    params = optax.apply_updates(params, updates)
    return (params, opt_state), None


carry = (params, opt_state)
(params, opt_state), _ = eqxi.scan(body, carry, None, length=100, kind="checkpointed")
print(params, opt_state[2].info.num_linesearch_steps.dtype)
"""

WHY = (
    "optax 0.2.3 and 0.2.4 make the line search's counter `num_linesearch_steps` twice: `init` "
    "writes `jnp.asarray(0)`, the default integer (int64 under `jax_enable_x64`), and every "
    "`update` counts in a loop that starts from `jnp.asarray(0, dtype=jnp.int32)`. The counter "
    "enters a step as int64 and leaves it as int32. Loops that compare their carry's types "
    "(equinox's checkpointed `scan`, `lax.cond`, `lax.scan` on a restored state) raise; "
    "`lax.scan` on `init`'s state and a jitted Python loop raise nothing, and the counter "
    "silently becomes int32. optax 0.2.5 uses the default integer and casts each new "
    "line-search state to the old one's dtypes."
)

STILL_OPEN = (
    "The fixes cover the line search's state only: a state saved without x64 and restored "
    "with x64 on still breaks a `lax.scan` on today's release, since the `params` and "
    "`updates` of L-BFGS's memory come back float64 while the line search's leaves keep their "
    "32 bits. `lax.scan` still promotes a weakly typed carry whose dtype changes instead of "
    "raising, so a scan that runs proves nothing about the state's types. And `init` still "
    "returns weakly typed leaves, so a jitted Python loop of `update` compiles twice on every "
    "release, 0.2.8 included; a strongly typed initial state (a NumPy round trip) compiles once."
)


def rosenbrock(x: Any) -> Any:
    """The Rosenbrock function, summed over consecutive pairs."""
    import jax.numpy as jnp

    return jnp.sum((1 - x[:-1]) ** 2 + 100 * (x[1:] - x[:-1] ** 2) ** 2)


def lbfgs_rosenbrock() -> dict[str, Any]:
    """``optax.lbfgs`` on Rosenbrock, with the line-search arguments; run it with x64 on."""
    import jax
    import jax.numpy as jnp
    import optax

    x = jnp.zeros(8)
    value, grad = jax.value_and_grad(rosenbrock)(x)
    return {
        "optimizer": optax.lbfgs(),
        "params": x,
        "grads": grad,
        "update_kwargs": dict(value=value, grad=grad, value_fn=rosenbrock),
    }


CASE = Case(
    number=4,
    key="optax-1210",
    issue=ISSUE,
    libraries=("optax", "jax", "equinox"),
    affected=("optax==0.2.3", "optax==0.2.4"),
    first_fixed="optax==0.2.5",
    fix_commits=("557cb19d", "2bc89e45"),
    docname=DOCNAME,
    summary="`optax.lbfgs` under x64 in a scan: an int64 counter comes back int32",
    errors=(
        ExpectedError(
            "equinox.internal.scan (the report)",
            "ValueError",
            r"-\s+num_linesearch_steps=i64\[\],\n\+\s+num_linesearch_steps=i32\[\],",
            "equinox's checkpointed scan, while it traces the body",
            "optax==0.2.4",
        ),
        ExpectedError(
            "lax.cond (skip a step)",
            "TypeError",
            r"num_linesearch_steps has type int32\[\].*int64\[\]",
            "lax.cond, while it traces the branches",
            "optax==0.2.4",
        ),
        ExpectedError(
            "equinox.internal.scan (the report), in the reporter's stack (jax 0.5.1)",
            "ValueError",
            r"^`body_fun` must have the same input and output structure\. Difference is:\n(.*\n)*"
            r"-           num_linesearch_steps=i64\[\],\n\+           num_linesearch_steps=i32\[\],\n",
            "equinox's checkpointed scan (equinox/internal/_loop/common.py:497, new_body_fun), "
            "while it traces the body",
            "era:optax-1210",
        ),
        ExpectedError(
            "lax.cond (skip a step), in the reporter's stack (jax 0.5.1)",
            "TypeError",
            r"num_linesearch_steps='DIFFERENT ShapedArray\(int32\[\]\) vs\. "
            r"ShapedArray\(int64\[\], weak_type=True\)'",
            "lax.cond, while it traces the branches",
            "era:optax-1210",
        ),
    ),
    triggers=TRIGGERS,
    checks=(
        CheckSetup("lbfgs on Rosenbrock", True, lbfgs_rosenbrock, "optax==0.2.4", x64=True),
        CheckSetup("lbfgs on Rosenbrock, fixed", False, lbfgs_rosenbrock, x64=True),
    ),
    messages=MESSAGES,
    fix=FIX,
    why=WHY,
    still_open=STILL_OPEN,
)

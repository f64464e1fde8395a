"""Case 1, optax#828: ``zero_nans()`` inside ``MultiSteps``; a bool state leaf turns int32.

The card, the errors the notebook asserts, the board's two rows (the bug, and the sticky
NaN that case 1 found in the same code) and the set-up the lessons page checks.
"""

from __future__ import annotations

from typing import Any

from casebook.cases._base import Case, CheckSetup, ExpectedError, Trigger, read_issue

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
)

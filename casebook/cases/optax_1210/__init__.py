"""Case 4, optax#1210: ``optax.lbfgs`` under x64 in a scan; an int64 counter comes back int32.

The card, the errors the notebook asserts, the board's row and the set-up the lessons page
checks (on the buggy release and on the current one, both in 64-bit mode).
"""

from __future__ import annotations

from typing import Any

from casebook.cases._base import Case, CheckSetup, ExpectedError, Trigger, read_issue

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
)

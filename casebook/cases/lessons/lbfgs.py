"""The lessons page's probe of case 4: does ``check_optimizer`` see the L-BFGS state drift
that makes the case's ``lax.cond`` crash?

Runs in 64-bit mode, on optax 0.2.4 (where ``num_linesearch_steps`` comes back from a step
as int32) and on the current release. The set-up is the case registry's
(``casebook.cases.optax_1210.lbfgs_rosenbrock``), the one the check is given.
"""

import jax
import optax

from casebook.cases.optax_1210 import lbfgs_rosenbrock, rosenbrock
from casebook.check import check_optimizer
from casebook.releases.program import variant

setup = lbfgs_rosenbrock()  # optax.lbfgs() on Rosenbrock at zeros(8), line-search kwargs
opt, x = setup["optimizer"], setup["params"]


@variant("check")
def check():
    report = check_optimizer(**setup)
    print(report)
    errors = [str(f) for f in report.errors]
    return {"ok": report.ok, "families": sorted(report.families()), "errors": errors}


def step(carry):
    x, state = carry
    value, grad = jax.value_and_grad(rosenbrock)(x)
    updates, state = opt.update(grad, state, x, value=value, grad=grad, value_fn=rosenbrock)
    return optax.apply_updates(x, updates), state


@variant("lax.cond")
def skip_a_step():
    jax.lax.cond(True, step, lambda c: c, (x, opt.init(x)))

"""Where the int32 counter of optax#1210 comes from, on a buggy release in 64-bit mode.

The set-up traces ``init`` and two L-BFGS updates with ``jax.eval_shape`` (no compile, no
arithmetic). The variants read the result: which leaves change type, the types of those
leaves step by step, and, in the jaxpr of one update, the equation that makes the line
search's counter ``num_linesearch_steps`` and the literal its loop starts from. Run it with
x64 on (``x64=True``).
"""

import jax
import jax.numpy as jnp
import optax

from casebook import trace
from casebook.releases.program import variant


def f(x):
    return jnp.sum(x**2)


solver = optax.lbfgs()
x = jnp.array([1.0, 2.0, 3.0])


def update(state):
    value, grad = jax.value_and_grad(f)(x)
    return solver.update(grad, state, x, value=value, grad=grad, value_fn=f)[1]


states = [solver.init(x)]  # the state after init, one update and two updates
for _ in range(2):
    states.append(jax.eval_shape(update, states[-1]))
paths = [jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_leaves_with_path(states[0])]
COUNTER = paths.index("[2].info.num_linesearch_steps")


@variant("drift")
def drift():
    """Every change of a leaf's type over two updates, as ``trace.state_drift`` reports it."""
    return [str(d) for d in trace.state_drift(update, states[0], steps=2)]


@variant("leaf types")
def leaf_types():
    """For each leaf that changes: its path, then its type after init, one and two updates."""
    changed = dict.fromkeys(d.path for d in trace.state_drift(update, states[0], steps=2))
    types = lambda path: [trace.type_str(jax.tree.leaves(s)[paths.index(path)]) for s in states]
    return [[path, *types(path)] for path in changed]


@variant("counter's equation")
def counter_equation():
    """Walk back from the update's output to the equation that makes the counter."""
    closed = jax.make_jaxpr(update)(states[0])
    out = closed.jaxpr.outvars[COUNTER]
    (eqn,) = [e for e in closed.jaxpr.eqns if out in e.outvars]
    slot = eqn.outvars.index(out)  # the loop's carry slot that becomes the output
    nconsts = eqn.params["cond_nconsts"] + eqn.params["body_nconsts"]
    seed = eqn.invars[nconsts + slot]  # the operand that starts that slot
    return {
        "output": COUNTER,
        "primitive": str(eqn.primitive),
        "slot": slot,
        "nconsts": nconsts,
        "seed": [type(seed).__name__, int(seed.val), seed.aval.str_short(short_dtypes=True)],
    }


@variant("jaxpr excerpt")
def jaxpr_excerpt():
    """The same equation in the printed jaxpr: its top level only, cut to the loop."""
    text = trace.jaxpr_text(update, states[0])
    top = text[text.index("\n{ lambda") + 1 :]
    excerpt = trace.cut(
        top,
        [r"= while\[$", r"^      (body|cond)_nconsts="],
        mark={
            r"^    \w+:i32\[\] \w+:f64\[\] \w+:f64\[\] \w+:f64\[3\]": "slot 0 out",
            r"^    \] .*\b0:i32\[\]": "slot 0 in",
        },
    )
    return {"text": str(excerpt), "marked": excerpt.marked}

"""Five loops over ``optax.lbfgs`` steps in 64-bit mode (optax#1210), and what each one
does to the line search's counter ``num_linesearch_steps``.

Three loops compare the types of their carry and raise on the buggy releases: equinox's
checkpointed scan, ``lax.cond`` and ``lax.scan`` on a restored (strongly typed) state. Two
never raise: ``lax.scan`` on the state ``init`` returns and a jitted Python loop; their
variants assert that the counter is still int64, which turns the silent switch into an
``AssertionError``. Three more variants only observe: the counter's type after ``init``, and
what the fresh scan and the jitted loop did (the counter after each step, how often the step
was traced, the parameters after the scan).

Input ``cast`` (default False): Fix B in its user form, the new state cast to the dtypes of
the old one in the loop body. Run it with x64 on (``x64=True``). The five loops also run in the
era stack of the report (jax 0.5.1), where ``casebook.trace`` cannot be imported: only the
three observing variants import it, when they run.
"""

import functools

import equinox.internal as eqxi
import jax
import jax.numpy as jnp
import numpy as np
import optax

from casebook.releases.program import inputs, variant

CAST = inputs().get("cast", False)
STEPS = 60


def rosenbrock(x):
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


solver = optax.lbfgs()
traces = 0  # how often `step` has been traced


def step(carry, _=None):
    global traces
    traces += 1
    params, opt_state = carry
    value, grad = jax.value_and_grad(rosenbrock)(params)
    updates, new_state = solver.update(
        grad, opt_state, params, value=value, grad=grad, value_fn=rosenbrock
    )
    if CAST:  # Fix B, user form: give the new state the dtypes of the old one
        new_state = jax.tree.map(lambda new, old: new.astype(old.dtype), new_state, opt_state)
    return (optax.apply_updates(params, updates), new_state), None


def counter(carry):
    """The line search's step counter in a ``(params, state)`` carry."""
    return carry[1][2].info.num_linesearch_steps


def type_str(x):
    """``casebook.trace.type_str``, imported on first use (it needs a newer jax than 0.5.1)."""
    from casebook.trace import type_str

    return type_str(x)


params = jnp.zeros(10)
fresh = (params, solver.init(params))  # as init returns it
restored = jax.tree.map(lambda a: jnp.asarray(np.asarray(a)), fresh)  # a checkpoint round trip


@variant("eqxi.scan")
def checkpointed_scan():
    jax.eval_shape(lambda c: eqxi.scan(step, c, None, length=STEPS, kind="checkpointed"), fresh)


@variant("lax.cond")
def step_or_keep():
    jax.eval_shape(lambda c: jax.lax.cond(True, lambda c: step(c)[0], lambda c: c, c), fresh)


@variant("lax.scan, restored")
def scan_restored():
    jax.eval_shape(lambda c: jax.lax.scan(step, c, length=STEPS), restored)


@functools.cache
def run_fresh_scan():
    """The fresh scan, compiled and run once: its final carry, and how often it traced `step`."""
    global traces
    traces = 0
    carry, _ = jax.jit(lambda c: jax.lax.scan(step, c, length=STEPS))(fresh)
    return carry, traces


@functools.cache
def run_jitted_loop(steps=3):
    """A jitted step, called in a Python loop: the last carry, the counter after each step
    (abstract), and how often `step` was traced (its compilations). Traced with eval_shape,
    which fills jit's cache exactly as calls would."""
    global traces
    traces, jstep, carry, seen = 0, jax.jit(step), fresh, []
    for _ in range(steps):
        carry, _ = jax.eval_shape(jstep, carry)
        seen.append(counter(carry))
    return carry, seen, traces


def assert_still_int64(carry):
    dtype = counter(carry).dtype
    assert dtype == jnp.int64, f"num_linesearch_steps silently became {dtype}"


@variant("lax.scan, fresh")
def scan_fresh():
    assert_still_int64(run_fresh_scan()[0])


@variant("jitted loop")
def jitted_loop():
    assert_still_int64(run_jitted_loop()[0])


@variant("init types")
def init_types():
    return {"fresh": type_str(counter(fresh)), "restored": type_str(counter(restored))}


@variant("scan observed")
def scan_observed():
    carry, traced = run_fresh_scan()
    return {"counter": type_str(counter(carry)), "traces": traced, "x": carry[0]}


@variant("loop observed")
def loop_observed():
    _, seen, traced = run_jitted_loop()
    return {"counters": [type_str(c) for c in seen], "traces": traced}

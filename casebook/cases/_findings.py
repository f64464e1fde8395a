"""The board's rows for the bugs the book's own check found (``book/check-findings``).

The problems of optax 0.2.8 that :func:`casebook.check.check_optimizer` found on a corpus of
ordinary set-ups (the first four, then five from the wide survey, ``python -m
casebook.corpus --wide``); they belong to no case, so they live here.
"""

from __future__ import annotations

from casebook.cases._base import Trigger

DOCNAME = "book/check-findings"

# Two optimizer steps in a lax.scan: the carry check catches a state that changes type.
_SCAN = """
import jax, jax.numpy as jnp, optax
def scanned(opt, params, steps=2):
    step = lambda state, _: (opt.update(params, state, params)[1], None)
    return jax.lax.scan(step, opt.init(params), None, length=steps)[0]
"""

TRIGGERS = (
    Trigger(
        "monitor state",
        "optax.monitor: the state's measurements go from {} to {name: value} in the first update",
        "",
        DOCNAME,
        _SCAN
        + """
state = scanned(optax.monitor({"norm": optax.tree.norm}), jnp.ones(4))
assert float(state.measurements["norm"]) == 2.0
result = "fixed"
""",
        "still failing",
        found_by_check=True,
    ),
    Trigger(
        "DoG bf16",
        "scale_by_distance_over_gradients on bf16 params: max_dist turns float32",
        "",
        DOCNAME,
        _SCAN
        + """
state = scanned(optax.scale_by_distance_over_gradients(), jnp.ones(4, jnp.bfloat16))
assert state.max_dist.dtype == jnp.bfloat16
result = "fixed"
""",
        "still failing",
        found_by_check=True,
    ),
    Trigger(
        "inject dtype",
        "inject_hyperparams(adamw, hyperparam_dtype=float32) on bf16 params: mu turns float32",
        "",
        DOCNAME,
        _SCAN
        + """
opt = optax.inject_hyperparams(optax.adamw, hyperparam_dtype=jnp.float32)(learning_rate=1e-3)
state = scanned(opt, jnp.ones(4, jnp.bfloat16))
assert state.inner_state[0].mu.dtype == jnp.bfloat16
result = "fixed"
""",
        "still failing",
        found_by_check=True,
    ),
    Trigger(
        "lars/muon masks",
        "inject_hyperparams(lars or muon)(weight_decay_mask=fn): weight decay silently off",
        "",
        DOCNAME,
        """
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
""",
        "silent",
        found_by_check=True,
    ),
    Trigger(
        "mixed-dtype state",
        "prodigy (and dadapt_adamw, dog, dowg, momo) on a tree of f32 and bf16 leaves: "
        "estim_lr turns float32",
        "",
        DOCNAME,
        _SCAN
        + """
params = {"w": jnp.ones((3, 3)), "b": jnp.ones(3, jnp.bfloat16)}
state = scanned(optax.contrib.prodigy(), params)
assert state.estim_lr.dtype == jnp.bfloat16
result = "fixed"
""",
        "still failing",
        found_by_check=True,
    ),
    Trigger(
        "scale_by_muon default",
        "contrib.scale_by_muon() with its default weight_dimension_numbers on a dict of matrices",
        "https://github.com/google-deepmind/optax/issues/1537",
        DOCNAME,
        _SCAN
        + """
params = {"w1": jnp.ones((3, 3)) + jnp.eye(3), "w2": jnp.ones((3, 2))}
state = scanned(optax.contrib.scale_by_muon(), params)
assert state.mu["w2"].shape == (3, 2)
result = "fixed"
""",
        "still failing",
        found_by_check=True,
    ),
    Trigger(
        "GaLore None leaves",
        "contrib.galore: init crashes on the None leaves of eqx.filter(model, eqx.is_array)",
        "",
        DOCNAME,
        _SCAN
        + """
params = {"w": jnp.ones((4, 3)), "activation": None}
state = scanned(optax.contrib.galore(1e-2, rank=2), params)
result = "fixed"
""",
        "still failing",
        found_by_check=True,
    ),
    Trigger(
        "SM3 scalar",
        "optax.sm3 on a tree with a 0-d leaf: IndexError in the first update",
        "https://github.com/google-deepmind/optax/pull/1736",
        DOCNAME,
        _SCAN
        + """
state = scanned(optax.sm3(1e-2), {"w": jnp.ones((3, 3)), "t": jnp.asarray(2.0)})
result = "fixed"
""",
        "still failing",
        found_by_check=True,
    ),
    Trigger(
        "apply_if_finite dtype",
        "apply_if_finite(adam) with bf16 grads for f32 params: the lax.cond branches disagree",
        "",
        DOCNAME,
        """
import jax, jax.numpy as jnp, optax
params = {"w": jnp.ones((3, 3))}
grads = {"w": jnp.ones((3, 3), jnp.bfloat16)}
opt = optax.apply_if_finite(optax.adam(1e-2), max_consecutive_errors=3)
step = lambda state, _: (opt.update(grads, state, params)[1], None)
state = jax.lax.scan(step, opt.init(params), None, length=2)[0]
assert int(state.notfinite_count) == 0
result = "fixed"
""",
        "still failing",
        found_by_check=True,
    ),
)

"""Case 8, optax PR #1059: what schedule-free's ``init`` shares with the params, on any stack.

On any release: ``releases.program_table("optax_1059.aliasing", targets)``. The set-up is a
two-leaf model and ``schedule_free_sgd``; each variant starts from a fresh ``init``:

* ``z is params``: whether each leaf of ``state.z`` is the matching param, as objects and as
  device buffers (``unsafe_buffer_pointer``);
* ``same-dtype astype``: whether ``x.astype(x.dtype)`` returns ``x`` itself, on a bare array;
* ``donated step``: one jitted step donating params and state; returns ``w[0, 0]``;
* ``copied state (fix B)``: the same step after copying the state's leaves once;
* ``step, no donation``: the same step without donation (the reference: nothing is written in
  place, so no alias can matter);
* ``init's new bytes``: what the fresh state holds in buffers of its own, in params' worth
  (Fix A's cost: 1.0 more on a release that copies ``z``).
"""

import jax
import jax.numpy as jnp
import optax

from casebook.releases.program import variant

opt = optax.contrib.schedule_free_sgd(1e-2)


def fresh():
    params = {"w": jnp.ones((16, 16)), "b": jnp.zeros(16)}
    return params, opt.init(params)


def train_step(params, state):
    grads = jax.tree.map(jnp.ones_like, params)
    updates, state = opt.update(grads, state, params)
    return optax.apply_updates(params, updates), state


def first_w(donate, copy=False):
    params, state = fresh()
    if copy:
        state = jax.tree.map(jnp.copy, state)
    step = jax.jit(train_step, donate_argnums=(0, 1) if donate else ())
    params, state = step(params, state)
    return float(params["w"][0, 0])


@variant("z is params")
def z_is_params():
    params, state = fresh()
    pairs = list(zip(jax.tree.leaves(params), jax.tree.leaves(state.z)))
    same_object = all(p is z for p, z in pairs)
    same_buffer = all(p.unsafe_buffer_pointer() == z.unsafe_buffer_pointer() for p, z in pairs)
    return {"same object": same_object, "same buffer": same_buffer}


@variant("same-dtype astype")
def same_dtype_astype():
    x = jnp.ones(3)
    return x.astype(x.dtype) is x


@variant("donated step")
def donated_step():
    return first_w(donate=True)


@variant("copied state (fix B)")
def copied_state():
    return first_w(donate=True, copy=True)


@variant("step, no donation")
def no_donation():
    return first_w(donate=False)


@variant("init's new bytes")
def init_new_bytes():
    """The bytes of the fresh state's buffers that are not the params', in params' worth."""
    params, state = fresh()
    own = {p.unsafe_buffer_pointer() for p in jax.tree.leaves(params)}
    new = [x.nbytes for x in jax.tree.leaves(state) if x.unsafe_buffer_pointer() not in own]
    return round(sum(new) / sum(p.nbytes for p in jax.tree.leaves(params)), 2)

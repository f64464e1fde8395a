"""Case 1, optax#828: two states on which Fix A and Fix B differ.

``reduce_on_plateau`` starts its ``best_loss`` at ``+inf``, and ``(1 - emit) * inf`` is
NaN; a typed PRNG key cannot be multiplied at all. Written for the API of optax 0.1.9
(``reduce_on_plateau`` takes the loss as ``loss=``), to run on the patched 0.1.9 wheels.
"""

import jax
import jax.numpy as jnp
import optax

from casebook.releases.program import variant

params = {"w": jnp.ones(2)}


@variant("plateau")
def plateau() -> dict:
    detector = optax.contrib.reduce_on_plateau(patience=2, factor=0.5)
    opt = optax.MultiSteps(optax.chain(optax.sgd(1.0), detector), every_k_schedule=2)
    state, update = opt.init(params), jax.jit(opt.update)
    lr, best = [], []
    for i in range(8):  # the loss falls on every mini-step: 10, 9, ..., 3
        _, state = update(params, state, params, loss=jnp.float32(10 - i))
        lr.append(float(state.inner_opt_state[1].lr))
        best.append(float(state.inner_opt_state[1].best_loss))
    return {"lr": lr, "best_loss": best}


def noisy() -> optax.GradientTransformation:
    """A transform whose state is a typed PRNG key, split on every update."""

    def update(updates, key, params=None):
        return updates, jax.random.split(key)[0]

    return optax.GradientTransformation(lambda p: jax.random.key(0), update)


@variant("key state")
def key_state() -> None:
    opt = optax.MultiSteps(optax.chain(noisy(), optax.sgd(1.0)), every_k_schedule=2)
    jax.jit(opt.update)(params, opt.init(params), params)

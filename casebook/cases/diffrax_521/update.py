"""Case 5 (diffrax#521): what ``optim.update`` does with a model that holds a
``PIDController``, on one optax release.

The set-up is the notebook's model without its solve (an ``eqx.nn.Linear`` and the
controller, whose field ``norm`` is the function ``rms_norm``), zero gradients and the
state ``init`` gets from the inexact arrays, as the equinox FAQ writes it. Each variant
traces one ``update`` call with ``jax.make_jaxpr``, as ``jit`` would, and compiles
nothing: the error, where there is one, is raised while tracing.
"""

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import optax

from casebook.releases.program import variant


class NeuralODE(eqx.Module):  # the notebook's model; the solve is not needed here
    linear: eqx.nn.Linear
    controller: diffrax.AbstractStepSizeController


model = NeuralODE(
    eqx.nn.Linear(2, 2, key=jax.random.key(0)),
    diffrax.PIDController(rtol=1e-3, atol=1e-6),
)
params = eqx.filter(model, eqx.is_inexact_array)
grads = jax.tree.map(jnp.zeros_like, params)
multisteps = optax.MultiSteps(optax.adam(1e-2), every_k_schedule=4)
adam = optax.adam(1e-2)


def trace(optim, update_params):
    """Trace ``optim.update(grads, state, update_params)``; the state is the FAQ's."""
    state = optim.init(params)
    return jax.make_jaxpr(lambda g, s: optim.update(g, s, update_params))(grads, state)


@variant("MultiSteps, filtered model (fix A)")
def multisteps_filtered():
    trace(multisteps, eqx.filter(model, eqx.is_array))


@variant("adam, whole model")
def adam_whole():
    trace(adam, model)


@variant("MultiSteps, whole model (the report)")
def multisteps_whole():
    trace(multisteps, model)

"""Six ways of passing ``adamw``'s weight-decay mask, with and without
``inject_hyperparams`` (optax#1373), each run to its first jitted update.

The set-up is the reporter's: an Equinox ``Net`` (a small MLP with a two-argument
``__call__``), its trainable part ``params`` and a mask of the same class that decays the
two weight matrices and not the biases. Four ways pass that mask tree: to plain ``adamw``,
to ``inject_hyperparams(adamw)`` (the report), with ``static_args="mask"`` (Fix B) and
wrapped in ``lambda p: tree``. Two pass a genuine mask *function*, without and with
``static_args``. Each returns which leaves its update decayed, by the float64 reference
of :mod:`casebook.cases.optax_1373.reference` (``"D-D-"``: the weights, as asked).
Two more return a hash of the lowered update, to compare programs across releases.

Inputs: ``P`` and ``G``, the parameter and gradient leaves (nested lists, in the leaf
order of ``params``), and ``WD``, the weight decay.
"""

import hashlib

import equinox as eqx
import jax
import jax.numpy as jnp
import optax

from casebook.cases.optax_1373.reference import decay_pattern
from casebook.releases.program import inputs, variant

P, G, WD = inputs()["P"], inputs()["G"], inputs()["WD"]


class Net(eqx.Module):
    mlp: eqx.nn.MLP

    def __init__(self, key):
        self.mlp = eqx.nn.MLP(in_size=2, out_size="scalar", width_size=2, depth=1, key=key)

    def __call__(self, x, y, key=None):
        return self.mlp(x) + y


params, static = eqx.partition(Net(jax.random.key(0)), eqx.is_inexact_array)
treedef = jax.tree.structure(params)
params = jax.tree.unflatten(treedef, [jnp.asarray(x, jnp.float32) for x in P])
grads = jax.tree.unflatten(treedef, [jnp.asarray(x, jnp.float32) for x in G])
weight_mask = eqx.tree_at(
    lambda m: [layer.weight for layer in m.mlp.layers],
    jax.tree.map(lambda _: False, params),
    [True, True],
)


def ndim_mask(p):
    """A genuine mask function: decay the leaves with more than one dimension."""
    return jax.tree.map(lambda x: x.ndim > 1, p)


HP = dict(learning_rate=optax.cosine_decay_schedule(0.01, 100), eps=1e-3, weight_decay=WD)
inject = optax.inject_hyperparams


def decayed(opt):
    """Init, then one jitted update: which leaves it decayed (``D``) and which not (``-``)."""
    updates, _ = jax.jit(opt.update)(grads, opt.init(params), params)
    return decay_pattern(jax.tree.leaves(updates), P, G, WD)


def lowered(opt):
    """The first 12 hex digits of the sha256 of the jitted update's StableHLO text."""
    text = jax.jit(opt.update).lower(grads, opt.init(params), params).as_text()
    return hashlib.sha256(text.encode()).hexdigest()[:12]


@variant("adamw(mask=tree)")
def plain_adamw():
    return decayed(optax.adamw(**HP, mask=weight_mask))


@variant("inject, mask=tree")
def injected_tree():
    return decayed(inject(optax.adamw)(**HP, mask=weight_mask))


@variant("inject, static_args")
def injected_static():
    return decayed(inject(optax.adamw, static_args="mask")(**HP, mask=weight_mask))


@variant("inject, mask=lambda p: tree")
def injected_lambda():
    return decayed(inject(optax.adamw)(**HP, mask=lambda p: weight_mask))


@variant("inject, mask=ndim_fn")
def injected_function():
    return decayed(inject(optax.adamw)(**HP, mask=ndim_mask))


@variant("inject, mask=ndim_fn, static_args")
def injected_function_static():
    return decayed(inject(optax.adamw, static_args="mask")(**HP, mask=ndim_mask))


@variant("lowered: inject, mask=tree")
def lowered_tree():
    return lowered(inject(optax.adamw)(**HP, mask=weight_mask))


@variant("lowered: inject, static_args")
def lowered_static():
    return lowered(inject(optax.adamw, static_args="mask")(**HP, mask=weight_mask))

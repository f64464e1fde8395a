"""Case 3, optax#1017: the three traps and the two fixes of ``optax.lbfgs`` on an Equinox
MLP, on one optax release.

Each variant traces one call with ``jax.eval_shape`` (shapes only, so the child compiles
nothing) and returns the tree structure of what it traced; a trap raises instead. The
traps are the reporter's call without ``params`` (1), the whole model as ``params`` (2)
and a ``value_fn`` evaluated on the filtered tree (3); the fixes filter inside the step
(A) or optimise the array tree only (B). Written for optax 0.2.3 and later.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

from casebook.releases.program import variant

# Everything abstract (shapes only), so that this process compiles nothing.
key = jax.ShapeDtypeStruct((2,), jnp.uint32)
model = eqx.filter_eval_shape(lambda k: eqx.nn.MLP(1, 1, 6, 2, activation=jnp.tanh, key=k), key)
params, static = eqx.partition(model, lambda leaf: isinstance(leaf, jax.ShapeDtypeStruct))
x = np.linspace(-2, 2, 32, dtype=np.float32)[:, None]
y = np.sin(2 * x)
loss = lambda m: jnp.mean((jax.vmap(m)(x) - y) ** 2)
optim = optax.lbfgs()
state = jax.eval_shape(optim.init, params)


def traced(step):
    """The tree structure of ``step(params, state)``, traced abstractly."""
    return str(jax.tree.structure(jax.eval_shape(step, params, state)))


@variant("trap 1")
def trap1():
    def step(p, s):  # the example's make_step: no params
        value, grads = eqx.filter_value_and_grad(loss)(eqx.combine(p, static))
        return optim.update(grads, s)

    return traced(step)


@variant("trap 2")
def trap2():
    def step(p, s):  # params = the whole model
        m = eqx.combine(p, static)
        value, grads = eqx.filter_value_and_grad(loss)(m)
        return optim.update(grads, s, m, value=value, grad=grads, value_fn=loss)

    return traced(step)


@variant("trap 3")
def trap3():
    def step(p, s):  # filtered params, value_fn evaluated on the filtered tree
        value, grads = eqx.filter_value_and_grad(loss)(eqx.combine(p, static))
        return optim.update(grads, s, p, value=value, grad=grads, value_fn=loss)

    return traced(step)


@variant("fix A")
def fix_a():
    def step(p, s):  # filter inside the step, apply the updates to the full model
        m = eqx.combine(p, static)
        value, grads = eqx.filter_value_and_grad(loss)(m)
        arrays, rest = eqx.partition(m, eqx.is_inexact_array)
        grads = eqx.filter(grads, eqx.is_inexact_array)
        value_fn = lambda q: loss(eqx.combine(q, rest))
        u, s = optim.update(grads, s, arrays, value=value, grad=grads, value_fn=value_fn)
        return eqx.filter(eqx.apply_updates(m, u), eqx.is_inexact_array), s

    return traced(step)


@variant("fix B")
def fix_b():
    def step(p, s):  # optimise the array tree only; value_fn recombines
        f = lambda q: loss(eqx.combine(q, static))
        value, grad = jax.value_and_grad(f)(p)
        u, s = optim.update(grad, s, p, value=value, grad=grad, value_fn=f)
        return optax.apply_updates(p, u), s

    return traced(step)

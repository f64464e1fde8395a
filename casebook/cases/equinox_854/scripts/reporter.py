# jax#23690, adapted: the thread's program scans an identity body over two arrays with
# has_aux=True and pulls back a random cotangent; here the body doubles one array, and the
# cotangent is ones. The carry (0, 2), the checkpointed scan and the jit around jax.vjp are
# the thread's.
import jax, jax.numpy as jnp
import equinox.internal as eqxi


def body(carry, x):
    return carry, 2.0 * x


def scanned(init, xs):
    _, ys = eqxi.scan(body, init, xs, length=4, kind="checkpointed")
    return ys


@jax.jit
def pullback_of_ones(init, xs):
    ys, pullback = jax.vjp(scanned, init, xs)
    return pullback(jnp.ones_like(ys))


print(pullback_of_ones((0, 2), jnp.arange(4.0))[1])

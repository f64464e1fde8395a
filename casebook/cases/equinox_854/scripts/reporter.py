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

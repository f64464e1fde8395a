# jax#28144 (patrick-kidger's pure-jax reduction of optimistix#129, names changed): a custom
# JVP whose rule returns a symbolic zero, under jvp of vmap of jit. The reporter's own program
# (efax's entropy gradient) needs efax; optimistix's root find is the card's.
import jax, jax.numpy as jnp
from jax.custom_derivatives import zero_from_primal


@jax.custom_jvp
def plus_one(x):
    return x + 1


@plus_one.defjvp
def plus_one_jvp(primals, tangents):
    (x,) = primals
    return plus_one(x), zero_from_primal(x, symbolic_zeros=True)


x = jnp.arange(3.0)
print(jax.jvp(jax.vmap(jax.jit(plus_one)), (x,), (x,)))

"""Case 7 (equinox#854): equinox's closure conversion, called with a weak and a strong scalar,
on one stack (an era or today's).

The set-up closure-converts ``double`` at a strongly typed ``float32`` example. Under
``jax.jit`` a Python ``3.0`` becomes a weakly typed ``float32`` tracer, ``jnp.float32(3.0)`` a
strong one; ``equinox`` compares the call's abstract values with the example's. The variant
``abstract values`` returns what ``jax.eval_shape`` reports for both inside ``jit``: whether
the struct has the field ``weak_type`` at all (jax 0.4.32 added it), and whether the weak and
the strong struct compare equal.
"""

import equinox as eqx
import jax
import jax.numpy as jnp

from casebook.releases.program import variant


def double(x):
    """The converted function: twice its argument."""
    return 2 * x


converted = eqx.filter_closure_convert(double, jnp.float32(1.0))


@variant("weak call: jit(f)(3.0)")
def weak_call():
    return float(jax.jit(lambda x: converted(x))(3.0))


@variant("strong call (fix B)")
def strong_call():
    return float(jax.jit(lambda x: converted(x))(jnp.float32(3.0)))


@variant("abstract values")
def abstract_values():
    seen = {}

    def record(name):
        def inner(x):
            seen[name] = jax.eval_shape(lambda: x)
            return x

        return inner

    jax.jit(record("weak"))(3.0)
    jax.jit(record("strong"))(jnp.float32(3.0))
    return {
        "weak": str(seen["weak"]),
        "has weak_type": hasattr(seen["weak"], "weak_type"),
        "equal": bool(seen["weak"] == seen["strong"]),
        "equinox": eqx.__version__,
    }

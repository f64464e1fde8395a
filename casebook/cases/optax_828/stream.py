"""Case 1, optax#828: the updates ``MultiSteps`` emits over a stream of gradients.

``MultiSteps(chain(zero_nans(), sgd(1.0)), every_k_schedule=2)``, jitted, fed the
mini-batch gradients given as the input ``grads`` (rows of three floats, NaN allowed).
The one variant returns every mini-step's update and the dtype ``found_nan`` ends with,
for the page to compare with a reference written in NumPy.
"""

import jax
import jax.numpy as jnp
import numpy as np
import optax

from casebook.releases.program import inputs, variant

GRADS = np.asarray(inputs()["grads"], np.float32)
opt = optax.MultiSteps(optax.chain(optax.zero_nans(), optax.sgd(1.0)), every_k_schedule=2)
params = jnp.zeros(3)


@variant("emitted")
def emitted() -> dict:
    state, update = opt.init(params), jax.jit(opt.update)
    rows = []
    for g in GRADS:
        u, state = update(jnp.asarray(g), state, params)
        rows.append(np.asarray(u).tolist())
    found_nan = state.inner_opt_state[0].found_nan
    return {"updates": rows, "found_nan_dtype": str(found_nan.dtype)}

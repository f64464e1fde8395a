# optax PR #1059: donating a whole train state, the params and a freshly initialised
# schedule-free state, to a jitted step. The PR's test steps a parabola with
# schedule_free_sgd and donate_argnums=(0, 1); this is that set-up in our own words.
import jax
import jax.numpy as jnp
import optax

opt = optax.contrib.schedule_free_sgd()
params = {"x": jnp.array([1.0, -2.0]), "y": jnp.array(3.0)}


def step(params, state):
    grads = jax.grad(lambda p: jnp.sum(p["x"] ** 2) + p["y"] ** 2)(params)
    updates, state = opt.update(grads, state, params)
    return optax.apply_updates(params, updates), state


state = opt.init(params)
params, state = jax.jit(step, donate_argnums=(0, 1))(params, state)

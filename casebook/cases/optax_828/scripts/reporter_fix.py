import jax
import jax.numpy as jnp
import optax

# optax >= 0.2.0: zero_nans() inside MultiSteps traces, jits and accumulates.
opt = optax.MultiSteps(optax.chain(optax.zero_nans(), optax.sgd(0.1)), every_k_schedule=2)
params = {"w": jnp.ones(3)}
state = opt.init(params)


@jax.jit
def step(params, state, batch):
    grads = jax.grad(lambda p: 0.5 * jnp.sum((p["w"] - batch) ** 2))(params)
    updates, state = opt.update(grads, state, params)
    return optax.apply_updates(params, updates), state


for batch in (jnp.zeros(3), jnp.ones(3)):  # two mini-batches, one sgd step
    params, state = step(params, state, batch)
print(params["w"], state.inner_opt_state[0].found_nan["w"].dtype)

import jax, jax.numpy as jnp, optax

inner = optax.chain(optax.zero_nans(), optax.sgd(0.1))
opt = optax.MultiSteps(inner, every_k_schedule=2)
params = {"w": jnp.ones(3)}
state = opt.init(params)
updates, state = jax.jit(opt.update)(params, state, params)
print(state.inner_opt_state[0].found_nan["w"].dtype)

import diffrax, equinox as eqx, jax, jax.numpy as jnp, optax

pid = diffrax.PIDController(rtol=1e-3, atol=1e-6)
model = {"linear": eqx.nn.Linear(2, 2, key=jax.random.key(0)), "controller": pid}
arrays = eqx.filter(model, eqx.is_inexact_array)
optim = optax.MultiSteps(optax.adam(1e-2), every_k_schedule=4)
with jax.disable_jit():
    optim.update(jax.tree.map(jnp.zeros_like, arrays), optim.init(arrays), model)

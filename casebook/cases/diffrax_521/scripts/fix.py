import diffrax, equinox as eqx, jax, jax.numpy as jnp, optax

class Model(eqx.Module):
    weight: jax.Array
    controller: diffrax.AbstractStepSizeController
model = Model(jnp.ones((2, 2)), diffrax.PIDController(rtol=1e-3, atol=1e-6))
optim = optax.MultiSteps(optax.adam(1e-2), every_k_schedule=4)
params = eqx.filter(model, eqx.is_inexact_array)  # the arrays, in init and in update
updates, state = optim.update(params, optim.init(params), params)
print(eqx.apply_updates(model, updates).controller.norm.__name__)  # the model is whole

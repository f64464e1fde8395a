import diffrax, equinox as eqx, jax, jax.numpy as jnp, optax

class Model(eqx.Module):
    weight: jax.Array
    controller: diffrax.AbstractStepSizeController  # norm: a function

model = Model(jnp.ones((2, 2)), diffrax.PIDController(rtol=0.1, atol=0.1))
optim = optax.MultiSteps(optax.adam(1e-2), every_k_schedule=4)
grads = eqx.filter(model, eqx.is_inexact_array)
params = eqx.filter(model, eqx.is_inexact_array)  # arrays only
updates, state = optim.update(grads, optim.init(params), params)
print(eqx.apply_updates(model, updates).controller.norm.__name__)

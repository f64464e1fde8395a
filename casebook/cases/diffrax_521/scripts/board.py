import jax, jax.numpy as jnp, equinox as eqx, optax, diffrax
class Model(eqx.Module):
    w: jax.Array
    controller: diffrax.PIDController
model = Model(jnp.ones(2), diffrax.PIDController(rtol=1e-3, atol=1e-6))
opt = optax.MultiSteps(optax.adam(1e-3), every_k_schedule=2)
state = opt.init(eqx.filter(model, eqx.is_inexact_array))
grads = eqx.filter(model, eqx.is_inexact_array)
opt.update(grads, state, model)
result = "fixed"

import diffrax, equinox as eqx, jax, jax.numpy as jnp, optax
class Model(eqx.Module):
    weight: jax.Array
    controller: diffrax.AbstractStepSizeController
model = Model(jnp.ones((2, 2)), diffrax.PIDController(rtol=1e-3, atol=1e-6))
arrays = eqx.filter(model, eqx.is_inexact_array)

import diffrax, equinox as eqx, jax, jax.numpy as jnp, optax

class MLPModel(eqx.Module):
    mlp: eqx.nn.MLP
    controller: diffrax.AbstractStepSizeController

model = MLPModel(eqx.nn.MLP(2, 2, 4, 1, activation=jnp.tanh, key=jax.random.key(0)), diffrax.ConstantStepSize())
arrays = eqx.filter(model, eqx.is_inexact_array)
optim = optax.MultiSteps(optax.adam(1e-2), every_k_schedule=4)
optim.update(jax.tree.map(jnp.zeros_like, arrays), optim.init(arrays), model)

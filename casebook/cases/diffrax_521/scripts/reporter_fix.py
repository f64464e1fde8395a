import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import optax


class NeuralODE(eqx.Module):
    linear: eqx.nn.Linear
    controller: diffrax.AbstractStepSizeController  # PIDController.norm is a function

    def __call__(self, y0):
        term = diffrax.ODETerm(lambda t, y, args: jnp.tanh(self.linear(y)))
        solution = diffrax.diffeqsolve(term, diffrax.Tsit5(), 0.0, 0.5, 0.1, y0, stepsize_controller=self.controller)
        return solution.ys[-1]

model = NeuralODE(eqx.nn.Linear(2, 2, key=jax.random.key(0)), diffrax.PIDController(rtol=1e-3, atol=1e-6))
optim = optax.MultiSteps(optax.adam(1e-2), every_k_schedule=4)
opt_state = optim.init(eqx.filter(model, eqx.is_inexact_array))

@eqx.filter_jit
def step(model, opt_state, y0, target):
    loss = lambda m: jnp.mean((jax.vmap(m)(y0) - target) ** 2)
    grads = eqx.filter_grad(loss)(model)
    params = eqx.filter(model, eqx.is_inexact_array)  # the arrays only, as in init
    updates, opt_state = optim.update(grads, opt_state, params)
    return eqx.apply_updates(model, updates), opt_state  # applied to the whole model

for y0 in jax.random.normal(jax.random.key(1), (4, 8, 2)):  # 4 microbatches of 8 states
    model, opt_state = step(model, opt_state, y0, 0.5 * y0)

import equinox as eqx
import jax
import jax.numpy as jnp
import optax

model = eqx.nn.MLP(1, 1, 6, 2, activation=jnp.tanh, key=jax.random.PRNGKey(0))
x = jnp.linspace(-2, 2, 32)[:, None]
y = jnp.sin(2 * x)
loss = lambda m: jnp.mean((jax.vmap(m)(x) - y) ** 2)

optim = optax.lbfgs()  # was: optax.adam(1e-3)
opt_state = optim.init(eqx.filter(model, eqx.is_inexact_array))


@eqx.filter_jit
def make_step(model, opt_state):
    value, grads = eqx.filter_value_and_grad(loss)(model)
    updates, opt_state = optim.update(grads, opt_state)  # as it was with adam
    return value, eqx.apply_updates(model, updates), opt_state


value, model, opt_state = make_step(model, opt_state)

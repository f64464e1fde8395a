import equinox as eqx
import jax
import jax.numpy as jnp
import optax

model = eqx.nn.MLP(1, 1, 6, 2, activation=jnp.tanh, key=jax.random.PRNGKey(0))
x = jnp.linspace(-2, 2, 32)[:, None]
y = jnp.sin(2 * x)
loss = lambda m: jnp.mean((jax.vmap(m)(x) - y) ** 2)

params, static = eqx.partition(model, eqx.is_inexact_array)  # arrays | the rest
optim = optax.lbfgs()
opt_state = optim.init(params)


@jax.jit
def make_step(params, opt_state):
    value_fn = lambda p: loss(eqx.combine(p, static))  # rebuilds the model
    value, grads = jax.value_and_grad(value_fn)(params)
    updates, opt_state = optim.update(
        grads, opt_state, params, value=value, grad=grads, value_fn=value_fn
    )
    return value, optax.apply_updates(params, updates), opt_state


for step in range(8):
    value, params, opt_state = make_step(params, opt_state)
    print(f"step {step}: loss {value:.6f}")
model = eqx.combine(params, static)  # the trained model, functions included

import jax, jax.numpy as jnp, optax
f = lambda x: jnp.sum((1 - x[:-1]) ** 2 + 100 * (x[1:] - x[:-1] ** 2) ** 2)
opt = optax.lbfgs()
vg = optax.value_and_grad_from_state(f)
def step(carry):
    x, s = carry
    v, g = vg(x, state=s)
    u, s = opt.update(g, s, x, value=v, grad=g, value_fn=f)
    return optax.apply_updates(x, u), s
x = jnp.zeros(4)
carry = (x, opt.init(x))
carry = jax.jit(lambda c: jax.lax.cond(True, step, lambda c: c, c))(carry)
assert carry[1][2].info.num_linesearch_steps.dtype == jnp.int64
result = "fixed"

import jax, jax.numpy as jnp, optax
params = {"w": jnp.ones(3, jnp.bfloat16)}
loss = lambda p: jnp.sum(jnp.square(p["w"].astype(jnp.float32)))
lbfgs = optax.lbfgs()
value, grad = optax.value_and_grad_from_state(loss)(params, state=lbfgs.init(params))
params = {"w": jnp.ones(3)}
loss = lambda p: jnp.sum(jnp.square(p["w"])).astype(jnp.bfloat16)
opt = optax.chain(optax.sgd(1.0), optax.scale_by_backtracking_linesearch(15, store_grad=True))
value, grad = jax.value_and_grad(loss)(params)
opt.update(grad, opt.init(params), params, value=value, grad=grad, value_fn=loss)
result = "fixed"

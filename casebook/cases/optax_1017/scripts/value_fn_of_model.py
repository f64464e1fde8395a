params, static = eqx.partition(model, eqx.is_inexact_array)
optim = optax.lbfgs()
value, grads = eqx.filter_value_and_grad(loss)(model)
optim.update(grads, optim.init(params), params, value=value, grad=grads, value_fn=loss)

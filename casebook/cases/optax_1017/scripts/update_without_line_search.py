params, static = eqx.partition(model, eqx.is_inexact_array)
optim = optax.lbfgs()
grads = eqx.filter_grad(loss)(model)
optim.update(grads, optim.init(params), params)  # no value, grad, value_fn

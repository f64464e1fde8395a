optim = optax.scale_by_lbfgs()
grads = eqx.filter_grad(loss)(model)
optim.update(grads, optim.init(eqx.filter(model, eqx.is_inexact_array)))  # no params

optim = optax.lbfgs()
state = optim.init(eqx.filter(model, eqx.is_inexact_array))
grads = eqx.filter_grad(loss)(model)
optim.update(grads, state)  # the reporter's call: no params

optim = optax.lbfgs()
state = optim.init(eqx.filter(model, eqx.is_inexact_array))
value, grads = eqx.filter_value_and_grad(loss)(model)
optim.update(grads, state, model, value=value, grad=grads, value_fn=loss)  # params=model

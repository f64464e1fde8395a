labels = Net('sgd', 'sgd')
optax.partition({'sgd': optax.sgd(0.1)}, labels).init(params)

import jax, jax.numpy as jnp, equinox as eqx, optax
class Affine(eqx.Module):  # a mask module whose __call__ takes one argument
    w: object
    b: object
    def __call__(self, x):
        return self.w * x + self.b
params = Affine(jnp.ones((2, 2)), jnp.ones(2))
opt = optax.inject_hyperparams(optax.adamw)(learning_rate=0.01, mask=Affine(True, False))
jax.jit(opt.update)(params, opt.init(params), params)

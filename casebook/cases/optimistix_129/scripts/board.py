import jax, jax.numpy as jnp, optimistix as optx

def cube_root(a):
    return optx.root_find(lambda y, a: y**3 - a, optx.Newton(1e-6, 1e-6), 1.0, args=a).value

grads = jax.grad(lambda a: jax.vmap(cube_root)(a).sum())(jnp.array([1.0, 8.0, 27.0]))
assert jnp.allclose(grads, jnp.array([1 / 3, 1 / 12, 1 / 27]), rtol=1e-4)
result = "fixed"

import jax, jax.numpy as jnp, optimistix as optx

def cube_root(a):
    solver = optx.Newton(rtol=1e-6, atol=1e-6)
    sol = optx.root_find(lambda y, a: y**3 - a, solver, 1.0, args=a)
    return sol.value

a = jnp.array([1.0, 8.0, 27.0])
grads = jax.grad(lambda a: jax.vmap(cube_root)(a).sum())(a)
print([f"{g:.4f}" for g in grads])

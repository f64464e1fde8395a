import jax, jax.numpy as jnp, diffrax

term, y0 = diffrax.ODETerm(lambda t, y, k: -k * y), jnp.ones(2)
solver = diffrax.Tsit5()

def final_sum(k):
    sol = diffrax.diffeqsolve(term, solver, 0.0, 1.0, 0.1, y0, args=k)
    return sol.ys[-1].sum()

print(f"{jax.grad(final_sum)(1.0):.4f}")

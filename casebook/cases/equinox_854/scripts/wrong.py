import jax, jax.numpy as jnp, diffrax


def final_sum(k):
    term = diffrax.ODETerm(lambda t, y, k: -k * y)
    sol = diffrax.diffeqsolve(
        term, diffrax.Tsit5(), t0=0.0, t1=1.0, dt0=0.1, y0=jnp.ones(2), args=k
    )
    return sol.ys[-1].sum()


print(f"{jax.grad(final_sum)(1.0):.4f}")

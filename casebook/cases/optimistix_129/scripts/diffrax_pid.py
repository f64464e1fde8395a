import jax, jax.numpy as jnp, diffrax

term = diffrax.ODETerm(lambda t, y, k: -k * y)
pid = diffrax.PIDController(rtol=1e-5, atol=1e-5)

def decayed(k):
    sol = diffrax.diffeqsolve(term, diffrax.Tsit5(), 0.0, 1.0, 0.1, 1.0, args=k, stepsize_controller=pid)
    return sol.ys[-1]

k = jnp.array([0.5, 1.0, 2.0])
print([f"{g:.4f}" for g in jax.grad(lambda k: jax.vmap(decayed)(k).sum())(k)])

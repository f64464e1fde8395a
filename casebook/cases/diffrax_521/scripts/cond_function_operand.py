import jax
def rms_norm(y): return y
jax.lax.cond(True, lambda op: 0.0, lambda op: 1.0, rms_norm)

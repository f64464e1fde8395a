# The card's "Do this": the fixed program, in plain library code, that runs on today's
# release and prints a line that shows it worked; the page's fix cell is this file.
import jax
import jax.numpy as jnp
import optax

print("optax-969: the fix (CONTRIBUTING.md)")

# The card's "You probably wrote": the smallest program a user writes that raises the card's
# message, in plain library code (no magics, no casebook); the page's repro cell runs it.
import jax
import jax.numpy as jnp
import optax

raise NotImplementedError("optax-969: the wrong code (CONTRIBUTING.md)")

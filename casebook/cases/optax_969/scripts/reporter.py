# The reporter's program, as the report has it (the page's repro cell runs it on the last
# failing release and asserts the message; `sync` writes it into that cell).
import jax
import jax.numpy as jnp
import optax

raise NotImplementedError("optax-969: the reporter's program (CONTRIBUTING.md)")

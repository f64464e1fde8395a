"""Helpers for the JAX Bug Casebook notebooks.

Three modules, imported explicitly so that ``import casebook`` stays free of jax:

* :mod:`casebook.releases` runs code on historical upstream releases in a subprocess;
* :mod:`casebook.trace` cuts jaxprs and reports dtype / weak-type / structure drift;
* :mod:`casebook.bench` times variants interleaved in one process.

``python -m casebook`` (see :mod:`casebook.__main__`) is the set-up and the two commands
of the README; it uses only the standard library so it can run before anything is installed.
"""

__all__ = ["releases", "trace", "bench"]

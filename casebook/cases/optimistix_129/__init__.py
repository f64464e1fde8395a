"""Case 9, optimistix#129: jax 0.6.0 lets its internal ``Zero`` escape from a batched custom
JVP (``grad`` of ``vmap`` through optimistix, diffrax or a plain ``custom_jvp``).

The check has no set-up here (``check_optimizer`` traces optimizers, and this bug lives in
how ``vmap`` batches a custom JVP); the rest of the case is ``case.toml``, ``scripts/`` and the
program ``carriers`` (:func:`~casebook.cases._base.read_case`).
"""

from __future__ import annotations

from casebook.cases._base import read_case

CASE = read_case(__file__)

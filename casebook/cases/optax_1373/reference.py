"""The independent reference of case 2 (optax#1373): the first AdamW update from a fresh
state, in float64 NumPy, and which leaves of an update it says were decayed.

Not a program itself: the programs of case 2 call it on each release (so their variants
return a decay pattern such as ``"D-D-"``), and the page calls it in the kernel, so both
compare updates with the same float64 step. NumPy only, so it imports on any release.

>>> decay_pattern([[-0.01499], [-0.00999]], p=[[1.0], [1.0]], g=[[1.0], [1.0]], wd=0.5)
'D-'
"""

from collections.abc import Sequence

import numpy as np


def adamw_reference(p, g, decay, *, wd, lr=0.01, eps=1e-3, b1=0.9, b2=0.999):
    """The first AdamW update of a leaf ``p`` with gradient ``g``, from zero moments and
    count 0 (so the learning rate is the schedule's initial 0.01), with or without the
    decoupled weight decay ``wd * p``."""
    p, g = np.asarray(p, np.float64), np.asarray(g, np.float64)
    mu_hat = (1 - b1) * g / (1 - b1)  # the first moment after one step, bias-corrected
    nu_hat = (1 - b2) * g**2 / (1 - b2)  # and the second
    u = mu_hat / (np.sqrt(nu_hat) + eps)
    return -lr * (u + wd * p if decay else u)


def decay_pattern(updates: Sequence, p: Sequence, g: Sequence, wd: float) -> str:
    """One character per leaf: ``D`` if the update matches the reference with weight decay,
    ``-`` if it matches the one without, ``?`` if neither (relative tolerance 1e-4)."""
    out = ""
    for u, p_leaf, g_leaf in zip(updates, p, g, strict=True):
        same = {
            c: np.allclose(
                u, adamw_reference(p_leaf, g_leaf, c == "D", wd=wd), rtol=1e-4, atol=1e-8
            )
            for c in "D-"
        }
        out += "D" if same["D"] else "-" if same["-"] else "?"
    return out

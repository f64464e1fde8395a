"""The memory-bandwidth floor: a donated ``x * 2`` step (:func:`copy_reference`) timed
with the variants, :func:`bandwidth`, and how close a step comes to the floor
(:func:`floor_fraction`).

Apart from :mod:`casebook.bench._timing`: it only adds one more step to time, and
reads the finished :class:`Timings`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from casebook.bench._timing import Timings


def copy_reference(nbytes: int, dtype: Any = "float32") -> tuple[Callable[[], Any], int]:
    """A memory-bound reference step and the bytes it moves per call.

    The step is a jitted ``x * 2`` on a donated buffer of about ``nbytes`` bytes that
    feeds its output back in, so no call allocates (and first-touches) fresh memory;
    ``x`` starts at zero so it never overflows.  Each call reads and writes the
    buffer once: bytes moved = 2 * buffer size.  Time it as one more variant of the
    same :func:`interleave`::

        copy, copy_bytes = copy_reference(param_bytes)
        t = interleave({"fix": fix_step, "bug": bug_step, "copy": copy})

    Args:
        nbytes: about how large the buffer is, in bytes.
        dtype: its dtype.

    Returns:
        ``(step, bytes moved per call)``.

    Examples:
        >>> step, moved = copy_reference(4096)
        >>> moved, step().shape
        (8192, (1024,))
    """
    dtype = jnp.dtype(dtype)
    size = max(1, nbytes // dtype.itemsize)
    double = jax.jit(lambda x: x * 2, donate_argnums=0)
    buffer = [jnp.zeros(size, dtype)]

    def step() -> jax.Array:
        buffer[0] = double(buffer[0])
        return buffer[0]

    return step, 2 * size * dtype.itemsize


def bandwidth(bytes_moved: int, seconds: float) -> float:
    """Bytes moved per second, in GB/s (1e9 bytes)."""
    return bytes_moved / seconds / 1e9


def floor_fraction(
    timings: Timings,
    variant: str,
    bytes_moved: int,
    copy_variant: str = "copy",
    *,
    copy_bytes: int,
) -> float:
    """The bandwidth ``variant`` achieves as a fraction of the copy reference's.

    ``(bytes_moved / median(variant)) / (copy_bytes / median(copy_variant))``: 1.0
    means the step runs at the memory floor, 0.25 that it is four times off it.

    Args:
        timings: timings with ``variant`` and the copy among their variants.
        variant: the step to judge.
        bytes_moved: the bytes the step must move per call (read and written).
        copy_variant: the name of the :func:`copy_reference` step.
        copy_bytes: the bytes the copy moves per call (from :func:`copy_reference`).

    Returns:
        The fraction of the copy's bandwidth the step reaches.

    Examples:
        A step that moves as many bytes as the copy, in twice its time:

        >>> t = Timings.from_dict({"wall": {"step": [0.002], "copy": [0.001]},
        ...                        "cpu": {"step": [0.002], "copy": [0.001]},
        ...                        "faults": {"step": [0], "copy": [0]}, "meta": {}})
        >>> floor_fraction(t, "step", 8192, copy_bytes=8192)
        0.5
    """
    achieved = bandwidth(bytes_moved, timings.median(variant))
    floor = bandwidth(copy_bytes, timings.median(copy_variant))
    return achieved / floor

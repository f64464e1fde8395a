"""Cold compile time, measured apart from step time: :func:`compile_seconds` and its
result :class:`CompileTime`.

Apart from :mod:`casebook.bench._timing` because it clears JAX's caches, so it must be
run before any step is timed, never between.
"""

from __future__ import annotations

import contextlib
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import jax

from casebook.display import PlainText, seconds_text


@dataclass(frozen=True, repr=False)
class CompileTime(PlainText):
    """Cold compile times of one function, in seconds.

    ``samples`` are trace + lower + XLA compile; ``lower_samples`` the trace + lower
    part of each, so the XLA share is the difference.
    """

    samples: tuple[float, ...]
    lower_samples: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    def __str__(self) -> str:
        lower = seconds_text(statistics.median(self.lower_samples))
        return (
            f"compile {seconds_text(self.median)} "
            f"(median of {len(self.samples)}; trace+lower {lower})"
        )


def compile_seconds(
    fn: Callable[..., Any], *args: Any, repeats: int = 3, **kwargs: Any
) -> CompileTime:
    """Median wall time of ``jax.jit(fn).lower(*args, **kwargs).compile()``, cold.

    JAX caches traces and executables by function, so a fresh ``jax.jit(fn)`` of the
    same ``fn`` "compiles" in well under a millisecond.  Each repeat therefore starts
    with ``jax.clear_caches()``: every number is a full trace, lower and compile.
    Side effect: every jitted function in the process recompiles on its next call, so
    call this before timing steps, not between.  A persistent compilation cache
    (``jax_compilation_cache_dir``, which the test command turns on for every process)
    would serve the repeats from disk, so it is off while this times (``cache_off``, below).

    Args:
        fn: the function to compile.
        *args: example arguments (arrays or ``ShapeDtypeStruct`` s).
        repeats: how many cold compiles to time.
        **kwargs: example keyword arguments.

    Returns:
        A :class:`CompileTime`: the samples, and the trace-and-lower part of each.

    Examples:
        >>> import jax.numpy as jnp
        >>> compiled = compile_seconds(lambda x: x * 2, jnp.ones(3), repeats=2)
        >>> len(compiled.samples), compiled.median > 0
        (2, True)
    """
    with cache_off():
        return _cold(fn, args, kwargs, repeats)


def _cold(fn: Callable[..., Any], args: Any, kwargs: Any, repeats: int) -> CompileTime:
    totals, lowers = [], []
    for _ in range(repeats):
        jax.clear_caches()
        start = time.perf_counter()
        lowered = jax.jit(fn).lower(*args, **kwargs)
        lowered_at = time.perf_counter()
        lowered.compile()
        totals.append(time.perf_counter() - start)
        lowers.append(lowered_at - start)
    return CompileTime(tuple(totals), tuple(lowers))


def no_compile_cache() -> None:
    """Turn jax's persistent compilation cache off for the rest of this process: a page
    that times first calls (trace and XLA compile) in its kernel calls it before anything
    compiles, since the book's test command gives every process a cache that would serve
    those compiles from disk. (jax decides once per process whether it uses the cache;
    ``reset_cache`` makes it decide again.)"""
    from jax._src import compilation_cache

    jax.config.update("jax_enable_compilation_cache", False)
    compilation_cache.reset_cache()


@contextlib.contextmanager
def cache_off() -> Iterator[None]:
    """jax's persistent compilation cache off while the block runs, then as it was: a
    compile timed inside is a compile, not a read from disk (:func:`no_compile_cache`)."""
    from jax._src import compilation_cache

    was = jax.config.jax_enable_compilation_cache
    no_compile_cache()
    try:
        yield
    finally:
        jax.config.update("jax_enable_compilation_cache", was)
        compilation_cache.reset_cache()

"""Honest timing of a few variants of one step, in one process.

Performance cases in the casebook compare a buggy step with its fix (and with a plain
memory copy as the floor).  Timings taken one variant after another drift with
thermal state, other tenants and allocator state, so here:

* variants are timed *interleaved*, round-robin, with the order rotated every round
  so that no variant always runs first, after a warm-up;
* every call's result is ``jax.block_until_ready``-ed inside the timed region;
* compile time is measured apart from step time (:func:`compile_seconds`), with jax's
  persistent compilation cache off (:func:`no_compile_cache`, for a page that times first calls);
* the report is the median and inter-quartile range of wall time, the median CPU
  time (``time.process_time``: above wall time when XLA used several cores) and the
  minor page faults per call (first-touch faults inflate CPU time);
* a donated ``x * 2`` (:func:`copy_reference`) timed in the same rounds gives the
  memory-bandwidth floor that :func:`floor_fraction` compares against.

:class:`Timings` round-trips through JSON, so a notebook can time in a clean
subprocess and plot in the parent.

Import them from here.  They live in private modules, one concern each: ``_device``
(:func:`device_label`, :func:`scale_for_device`; :data:`QUIET_MALLOC` is
``casebook.runenv``'s), ``_compile``
(:func:`compile_seconds`, :class:`CompileTime`), ``_timing`` (:func:`interleave`,
:class:`Timings`) and ``_memory`` (:func:`copy_reference`, :func:`bandwidth`,
:func:`floor_fraction`).  Beside them, the public :mod:`casebook.bench.claims` asserts
the prose's claims on timings and :mod:`casebook.bench.records` stores them per device.
"""

from __future__ import annotations

from casebook import runenv
from casebook.bench._compile import CompileTime, compile_seconds, no_compile_cache
from casebook.bench._device import device_label, scale_for_device
from casebook.bench._memory import bandwidth, copy_reference, floor_fraction
from casebook.bench._timing import Timings, interleave

QUIET_MALLOC = runenv.QUIET_MALLOC
"""glibc malloc settings for a benchmark *subprocess* on CPU (pass as ``env=``), and for
every process of the test command (``run_tests`` sets them), page kernels included.

XLA's CPU buffers come from malloc. By default, large blocks are mmap-ed fresh and
returned on free, so every step's outputs first-touch new pages (~6 us per 4 KiB page
on the VMs measured here): tens of milliseconds per step at tens of MiB, in different
amounts per variant. These settings keep freed memory in the process for reuse; the
``faults/call`` column of ``Timings.table`` shows whether it worked
(it should read 0). They must be set before the process starts, hence a subprocess.
"""

__all__ = [
    "QUIET_MALLOC",
    "CompileTime",
    "Timings",
    "bandwidth",
    "compile_seconds",
    "no_compile_cache",
    "copy_reference",
    "device_label",
    "floor_fraction",
    "interleave",
    "scale_for_device",
]

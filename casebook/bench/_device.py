"""Where a benchmark runs: the device in words (:func:`device_label`), a size that fits
it (:func:`scale_for_device`), and the metadata every :class:`~casebook.bench.Timings`
carries.

Kept apart from the timing itself so that pages and status reports can name the
machine without importing the timing code.
"""

from __future__ import annotations

import datetime
import os
import platform
from typing import Any

import jax


def _cpu_model() -> str | None:
    """The CPU model name from /proc/cpuinfo, if there is one to read."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        return None
    return None


def _usable_cpus() -> int:
    """CPUs this process may run on (the affinity mask, where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def device_label() -> str:
    """The default device in words: ``'gpu: NVIDIA H100 80GB HBM3'``, or for a CPU
    its model and the number of CPUs usable here: ``'cpu: AMD EPYC 7B13 (2 cores)'``."""
    device = jax.devices()[0]
    if device.platform != "cpu":
        return f"{device.platform}: {device.device_kind}"
    model = _cpu_model() or platform.processor() or device.device_kind
    return f"cpu: {model} ({_usable_cpus()} cores)"


def scale_for_device(cpu: int, gpu: int) -> int:
    """``gpu`` when the default backend is an accelerator (GPU, TPU), else ``cpu``:
    lets a notebook pick a benchmark size that fits the machine it runs on."""
    return cpu if jax.default_backend() == "cpu" else gpu


def _run_meta() -> dict[str, Any]:
    """Where and when a measurement was taken."""
    return {
        "device": device_label(),
        "backend": jax.default_backend(),
        "jax": jax.__version__,
        "platform": platform.platform(),
        "machine": platform.machine(),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }

"""Judge :func:`casebook.check.check_optimizer` on a corpus of real optimizer set-ups.

Each set-up (:mod:`casebook.maintainer.corpus._setups`, :mod:`casebook.maintainer.corpus._cases`) is run for real
by an oracle: a real ``init``, real ``update`` steps called the way the set-up calls
them (whose states must keep their structure, dtypes and shapes), a real ``lax.scan``
over the updates, traced and lowered by ``jax.jit`` (which refuses a state whose types
change; compiling it would add time and no check),
and, for a wrapper that may silently change an optimizer, the updates compared with
those of the plain optimizer.  The check is then run on the same set-up, as a user
would call it, and the two verdicts are compared: a **false alarm** is a problem
reported on a set-up that works, a **miss** is a set-up that fails with no problem
reported.  :func:`main` is the corpus command; ``python -m casebook.maintainer.corpus --help``.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from casebook.check import check_optimizer, default_grads
from casebook.maintainer.corpus._axes import main_axes
from casebook.maintainer.corpus._cases import case_set_ups
from casebook.maintainer.corpus._setups import Built, SetUp, generated_set_ups
from casebook.maintainer.corpus._wide import focus_set_ups, wide_set_ups

__all__ = ["Verdict", "all_set_ups", "judge", "main", "oracle", "representative_set_ups"]

SCAN_STEPS = 4  # long enough for a drift that first shows at step 3


def all_set_ups(wide: bool = False) -> list[SetUp]:
    """Every set-up of the corpus, in a fixed order; with ``wide``, then the wide survey's
    (:mod:`casebook.maintainer.corpus._wide`: every public transformation on every kind of tree)."""
    set_ups = [*generated_set_ups(), *case_set_ups(), *focus_set_ups()]
    if wide:
        set_ups += wide_set_ups(skip={s.name for s in set_ups})
    return set_ups


def representative_set_ups() -> list[SetUp]:
    """The part of the corpus that the unit tests run (seconds), wide survey included."""
    return [s for s in all_set_ups(wide=True) if s.representative]


def _update(built: Built, grads: Any, state: Any) -> tuple[Any, Any]:
    if built.with_params:
        return built.optimizer.update(grads, state, built.params, **built.update_kwargs)
    return built.optimizer.update(grads, state, **built.update_kwargs)


def _init(built: Built, optimizer: Any) -> Any:
    return optimizer.init(built.params if built.init_params is None else built.init_params)


def _same_updates(built: Built) -> str | None:
    """None if two steps of ``built.optimizer`` and ``built.reference`` agree."""
    states = [_init(built, built.optimizer), _init(built, built.reference)]
    for k in range(2):
        mine, states[0] = _update(built, built.grads, states[0])
        ref, states[1] = built.reference.update(
            built.grads, states[1], built.params, **built.update_kwargs
        )
        for a, b in zip(jax.tree.leaves(mine), jax.tree.leaves(ref)):
            if not np.allclose(np.asarray(a, np.float32), np.asarray(b, np.float32), atol=1e-6):
                return f"silent: step {k + 1} updates differ from the plain optimizer's"
    return None


def _retyped(before: Any, after: Any) -> str | None:
    """Where a concrete state changed structure, dtype or shape (not weak type)."""
    if jax.tree.structure(before) != jax.tree.structure(after):  # type: ignore[operator]
        return "structure"
    for (path, a), b in zip(jax.tree_util.tree_leaves_with_path(before), jax.tree.leaves(after)):
        if jnp.result_type(a) != jnp.result_type(b) or jnp.shape(a) != jnp.shape(b):
            return (
                f"{jax.tree_util.keystr(path)} {jnp.result_type(a)}{list(jnp.shape(a))} -> "
                f"{jnp.result_type(b)}{list(jnp.shape(b))}"
            )
    return None


def oracle(built: Built, steps: int = SCAN_STEPS) -> str | None:
    """Run a set-up for real; None if it works, else what went wrong.

    Args:
        built: the set-up.
        steps: how many real updates to run, one by one and in a ``lax.scan``.

    Returns:
        None, or a one-line reason: the exception of ``init``, of an ``update`` or of the
        scan, a state whose structure, dtype or shape changed in the real updates (what
        a jitted loop retraces on and a checkpoint restore refuses; ``lax.scan`` forgives
        some of it when the first state is weakly typed), or a silent difference from the
        reference optimizer.
    """
    try:
        state = current = _init(built, built.optimizer)
        for k in range(steps):
            current = _update(built, built.grads, current)[1]
            retyped = _retyped(state, current)
            if retyped:
                return f"state changes in real update {k + 1}: {retyped}"

        def body(carry: Any, _: Any) -> tuple[Any, None]:
            return _update(built, built.grads, carry)[1], None

        # lax.scan checks its carry's types while it is traced; lowering (not compiling)
        # runs every such check and keeps the corpus within its time.
        jax.jit(lambda s: jax.lax.scan(body, s, None, length=steps)).lower(state)
    except Exception as error:  # the oracle's verdict is the exception
        return f"{type(error).__name__}: {(str(error).strip().splitlines() or [''])[0][:120]}"
    if built.reference is not None:
        return _same_updates(built)
    return None


def _default_like(grads: Any, params: Any) -> bool:
    """Whether ``grads`` are what the check would assume without them (zeros like the
    float leaves, same dtypes, None elsewhere), so the corpus can call it without grads."""
    default = default_grads(params)  # the rule the check itself uses
    if jax.tree.structure(default) != jax.tree.structure(grads):  # type: ignore[operator]
        return False
    return all(
        d.shape == g.shape and d.dtype == g.dtype
        for d, g in zip(jax.tree.leaves(default), jax.tree.leaves(grads))
    )


@dataclass(frozen=True)
class Verdict:
    """The oracle's and the check's verdicts on one set-up, and the check's time."""

    name: str
    failure: str | None  # the oracle's reason, None when the set-up works
    alarm: str | None  # the check's first problem (or exception), None when ok
    seconds: float

    @property
    def false_alarm(self) -> bool:
        return self.failure is None and self.alarm is not None

    @property
    def miss(self) -> bool:
        return self.failure is not None and self.alarm is None


def _call_check(check: Callable[..., Any], built: Built, new_api: bool) -> Any:
    grads = None if _default_like(built.grads, built.params) else built.grads
    kwargs: dict[str, Any] = dict(update_kwargs=built.update_kwargs, init_params=built.init_params)
    if new_api:
        kwargs.update(update_params=built.with_params, **built.check_kwargs)
    return check(built.optimizer, built.params, grads, **kwargs)


def judge(set_up: SetUp, check: Callable[..., Any] | None = None, new_api: bool = True) -> Verdict:
    """The oracle's and the check's verdict on one set-up (x64 on where it asks).

    Args:
        set_up: the set-up.
        check: the ``check_optimizer`` to judge (the project's by default).
        new_api: whether ``check`` takes ``update_params=`` (an older check does not).

    Returns:
        A :class:`Verdict`; an exception raised by the check counts as an alarm.
    """
    check = check_optimizer if check is None else check
    with jax.enable_x64(set_up.x64):
        built = set_up.make()
        failure = oracle(built)
        t0 = time.perf_counter()
        try:
            report = _call_check(check, built, new_api)
            alarm = str(report.problems[0]) if report.problems else None
        except Exception as error:  # a check that refuses a set-up raises an alarm
            first = (str(error).splitlines() or [""])[0]  # a bare ``raise X()`` has none
            alarm = f"raised {type(error).__name__}: {first[:120]}"
        seconds = time.perf_counter() - t0
    return Verdict(set_up.name, failure, alarm, seconds)


def _load_check(path: str) -> Callable[..., Any]:
    spec = importlib.util.spec_from_file_location("casebook_check_under_test", path)
    if spec is None or spec.loader is None:
        raise ValueError(f"--check {path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module.check_optimizer


def summary(verdicts: Sequence[Verdict]) -> str:
    """The corpus figures as text: counts, false alarms, misses, timing."""
    times = sorted(v.seconds for v in verdicts)
    p99 = times[min(len(times) - 1, int(round(0.99 * (len(times) - 1))))]
    bad = sum(v.failure is not None for v in verdicts)
    lines = [
        f"{len(verdicts)} set-ups: {bad} fail for real (oracle), {len(verdicts) - bad} work",
        f"false alarms: {sum(v.false_alarm for v in verdicts)}",
        f"misses: {sum(v.miss for v in verdicts)}",
        f"check time: median {statistics.median(times):.3f} s, p99 {p99:.3f} s, "
        f"max {times[-1]:.3f} s",
    ]
    for v in verdicts:
        if v.false_alarm:
            lines.append(f"  FALSE ALARM {v.name}: {v.alarm}")
        if v.miss:
            lines.append(f"  MISS        {v.name}: {v.failure}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """The corpus command: judge the check on the corpus and print the figures.

    Args:
        argv: the command-line arguments (``sys.argv[1:]`` by default).

    Returns:
        0 when there is no false alarm and no miss, 1 otherwise.
    """
    parser = argparse.ArgumentParser(
        prog="python -m casebook.maintainer.corpus",
        description="Run check_optimizer on the corpus of real set-ups and compare with an "
        "oracle (real init, updates and lax.scan): false alarms, misses, timing.",
    )
    parser.add_argument(
        "--representative",
        action="store_true",
        help="only the representative part that the unit tests run",
    )
    parser.add_argument(
        "--wide",
        action="store_true",
        help="also the wide survey: every public optax transformation on every kind of tree "
        "(mixed dtypes, other grads dtypes, 0-d and None leaves, conv kernels; minutes)",
    )
    parser.add_argument("-k", "--only", default="", help="only set-ups whose name contains this")
    parser.add_argument(
        "--check",
        metavar="PATH",
        help="judge the check_optimizer of this file (e.g. an older check.py)",
    )
    parser.add_argument(
        "--old-api",
        action="store_true",
        help="call the check as its first version could be called (without update_params, grads_dtype or steps=None)",
    )
    parser.add_argument(
        "--axes",
        action="store_true",
        help="instead, the axes the oracle does not cover: a loss in another dtype than the "
        "params, a donated init state, live buffers of an eager loop (minutes)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per set-up")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.axes:
        return main_axes(args.only, args.verbose)
    check = _load_check(args.check) if args.check else None
    set_ups = representative_set_ups() if args.representative else all_set_ups(args.wide)
    set_ups = [s for s in set_ups if args.only in s.name]
    if not set_ups:
        parser.error(f"no set-up matches {args.only!r}")
    verdicts = []
    for set_up in set_ups:
        verdict = judge(set_up, check, new_api=not args.old_api)
        verdicts.append(verdict)
        if args.verbose:
            print(
                f"{verdict.seconds:6.3f}s {set_up.name:50} oracle: {verdict.failure or 'works'}"
                f" | check: {verdict.alarm or 'ok'}",
                flush=True,
            )
    print(f"jax {jax.__version__}, {jax.default_backend()}; " + summary(verdicts))
    return int(any(v.false_alarm or v.miss for v in verdicts))


if __name__ == "__main__":
    raise SystemExit(main())

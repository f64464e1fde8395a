"""What a benchmark's prose says, asserted: speed claims with margins, and an A/A control.

A page that says "fix B is faster than fix A" must fail when that stops being true, but a
busy machine must not fail it. So every benchmark times one variant twice (the A/A
control, added by :func:`casebook.bench.interleave`), and the control is the claim's own
error bar. A :class:`Claim` is a ratio of two variants' times (the median of their
per-round ratios, so that the load of one moment weighs on both) and the interval the
prose promises it lies in:

- the control reads ``1.0 ± TOLERANCE``: the claim is judged on the stated interval;
- it reads further off, up to ``1.0 ± NOISY``: the interval is widened by the control's
  own spread (``[low / s, high * s]``, ``s = max(c, 1 / c)``), since that is how far the
  machine moved two identical timings apart;
- further still: the claim is not judged, and a :class:`NoisyMachine` warning says so.

A claim outside its (widened) interval raises :class:`ClaimFailed`. The page then quotes
the ratio through ``glue``, so the number in the sentence is the checked one.

Standard library only; works on anything with ``ratio(a, b)`` and ``names``.
"""

from __future__ import annotations

import json
import math
import os
import re
import warnings
from dataclasses import asdict, dataclass
from typing import Protocol

from casebook.display import PlainText, Table

__all__ = [
    "CONTROL_SUFFIX",
    "LOG_ENV",
    "NOISY",
    "TOLERANCE",
    "Claim",
    "ClaimFailed",
    "NoisyMachine",
    "UnreliableBenchmark",
    "check_control",
    "check_interval",
    "claim",
    "claims_table",
    "control_ratio",
    "spread",
    "stated_numbers",
]

CONTROL_SUFFIX = " (A/A)"
"""The name of the A/A control is the name of the variant it repeats plus this."""

TOLERANCE = 0.1
"""How far from 1.0 the A/A control may read for a claim to be judged on its stated interval."""

NOISY = 0.5
"""How far from 1.0 the A/A control may read for a claim to be judged at all (on an
interval widened by the control's spread)."""


class ClaimFailed(AssertionError):
    """A benchmark measured something other than what its prose says."""


class UnreliableBenchmark(AssertionError):
    """The timings hold no A/A control, so no claim on them can be judged."""


class NoisyMachine(UserWarning):
    """The A/A control reads beyond ``1.0 ± NOISY``: the machine was too busy for this
    benchmark to judge a claim, so the claim was not judged (and did not fail)."""


class Ratios(Protocol):
    """What a claim reads from timings: the variant names and the ratio of two variants'
    times (:meth:`casebook.bench.Timings.ratio`)."""

    @property
    def names(self) -> list[str]: ...

    def ratio(self, a: str, b: str) -> float: ...


def control_ratio(timings: Ratios) -> tuple[str, float]:
    """The variant the A/A control repeats, and the ratio of its two medians."""
    twins = [n for n in timings.names if n.endswith(CONTROL_SUFFIX)]
    if len(twins) != 1:
        raise UnreliableBenchmark(
            f"expected one A/A control (a variant named '<name>{CONTROL_SUFFIX}'), "
            f"found {len(twins)} among {timings.names}"
        )
    original = twins[0][: -len(CONTROL_SUFFIX)]
    return original, timings.ratio(twins[0], original)


def check_control(timings: Ratios, tolerance: float = TOLERANCE) -> float:
    """The A/A ratio, after asserting it is ``1.0 ± tolerance`` (for a caller that wants
    the strict check, such as a test of the timer itself)."""
    original, ratio = control_ratio(timings)
    if not abs(ratio - 1.0) <= tolerance:
        raise UnreliableBenchmark(
            f"the A/A control ({original} timed twice) reads {ratio:.3f}, not 1.0 ± "
            f"{tolerance:g}: the machine was too noisy; rerun it on an idle machine"
        )
    return ratio


def spread(control: float) -> float:
    """How far apart the machine moved two identical timings, as a factor >= 1."""
    return max(control, 1.0 / control)


@dataclass(frozen=True, repr=False)
class Claim(PlainText):
    """``slower / faster`` as measured, and the interval ``[low, high]`` the prose claims.

    Made by :func:`claim`; it prints as one line with its verdict.

    Args:
        says: the sentence of the page.
        numerator: the variant on top of the ratio.
        denominator: the variant below.
        ratio: the measured ratio of their medians.
        low: the lowest ratio the sentence allows.
        high: the highest.
        control: the A/A ratio of the same timings.
        margin: the factor the interval was widened by (1.0 when the control read
            within ``TOLERANCE``; the control's :func:`spread` beyond).
        judged: False when the control read beyond ``NOISY``: the claim was not judged.

    Examples:
        >>> print(Claim("B is faster", "A", "B", 1.31, 1.1, float("inf"), 1.02))
        B is faster: A / B = 1.31 in [1.1, ∞] (holds; A/A 1.020)
        >>> print(Claim("B is faster", "A", "B", 1.05, 1.1, float("inf"), 1.15, margin=1.15))
        B is faster: A / B = 1.05 in [1.1, ∞] (holds within the A/A's 1.15x; A/A 1.150)
    """

    says: str
    numerator: str
    denominator: str
    ratio: float
    low: float
    high: float
    control: float
    margin: float = 1.0
    judged: bool = True

    @property
    def holds(self) -> bool:
        """The ratio lies in the interval, widened by ``margin`` (True when not judged)."""
        return not self.judged or self.low / self.margin <= self.ratio <= self.high * self.margin

    def bounds(self) -> str:
        high = "∞" if math.isinf(self.high) else f"{self.high:g}"
        return f"[{self.low:g}, {high}]"

    def __str__(self) -> str:
        if not self.judged:
            mark = "not judged: the machine was too busy"
        elif not self.holds:
            mark = "FAILS"
        else:
            mark = "holds" if self.margin == 1.0 else f"holds within the A/A's {self.margin:.2f}x"
        return (
            f"{self.says}: {self.numerator} / {self.denominator} = {self.ratio:.2f} "
            f"in {self.bounds()} ({mark}; A/A {self.control:.3f})"
        )


def claim(
    timings: Ratios,
    numerator: str,
    denominator: str,
    *,
    at_least: float = 0.0,
    at_most: float = math.inf,
    says: str,
    tolerance: float = TOLERANCE,
) -> Claim:
    """Assert that ``timings.ratio(numerator, denominator)`` lies in
    ``[at_least, at_most]``, widened by the A/A control's spread when it reads beyond
    ``1.0 ± tolerance`` (see the module's docstring); the :class:`Claim`.

    ``says`` is the sentence of the page the claim stands for, quoted in a failure.

    Args:
        timings: anything with ``names`` and ``ratio(a, b)``, such as
            :class:`casebook.bench.Timings` (whose ``claim`` method calls this).
        numerator: the variant expected to be slower (for ``at_least`` > 1).
        denominator: the variant it is compared with.
        at_least: the lowest ratio the sentence allows.
        at_most: the highest ratio the sentence allows.
        says: the sentence of the page, quoted in a failure.
        tolerance: how far from 1.0 the A/A control may read before the interval widens.

    Returns:
        The :class:`Claim`, whose ``ratio`` the page glues into its prose.

    Raises:
        ValueError: the interval bounds nothing, or ``says`` does not state its bounds
            (:func:`check_interval`).
        UnreliableBenchmark: the timings hold no A/A control.
        ClaimFailed: the ratio lies outside ``[at_least, at_most]`` (widened).

    Warns:
        NoisyMachine: the control reads beyond ``1.0 ± NOISY``; the claim is not judged.

    Examples:
        >>> class T:
        ...     names = ["a", "a (A/A)", "b"]
        ...     def ratio(self, a, b):
        ...         seconds = {"a": 2.0, "a (A/A)": 2.02, "b": 1.0}
        ...         return seconds[a] / seconds[b]
        >>> claim(T(), "a", "b", at_least=1.5, says="a takes at least 1.5x the time of b").ratio
        2.0
        >>> claim(T(), "a", "b", at_most=1.5, says="a takes at most 1.5x the time of b")
        Traceback (most recent call last):
            ...
        casebook.bench.claims.ClaimFailed: 'a takes at most 1.5x the time of b' does not hold: a / b = 2.00, outside [0, 1.5]
    """
    check_interval(at_least, at_most, says)
    original, control = control_ratio(timings)
    ratio = timings.ratio(numerator, denominator)
    off = abs(control - 1.0)
    margin = 1.0 if off <= tolerance else spread(control)
    result = Claim(
        says, numerator, denominator, ratio, at_least, at_most, control, margin, off <= NOISY
    )
    _log(result)
    if not result.judged:
        warnings.warn(
            f"{says!r} was not judged: the A/A control ({original} timed twice) reads "
            f"{control:.3f}, beyond 1.0 ± {NOISY:g}; rerun it on an idle machine",
            NoisyMachine,
            stacklevel=2,
        )
    elif not result.holds:
        widened = "" if margin == 1.0 else f" widened by the A/A's {margin:.2f}x"
        raise ClaimFailed(
            f"{says!r} does not hold: {numerator} / {denominator} = {ratio:.2f}, "
            f"outside {result.bounds().replace('∞', 'inf')}{widened}"
        )
    return result


_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?")


def stated_numbers(says: str) -> set[float]:
    """The numbers a sentence states (``"0.9x to 1.5x"``: 0.9 and 1.5)."""
    return {float(n) for n in _NUMBER.findall(says)}


def check_interval(at_least: float, at_most: float, says: str) -> None:
    """Refuse a claim whose interval the page does not state, or that bounds nothing.

    A claim's interval is the page's sentence in numbers: each finite bound must be
    written in ``says`` (``at_least=1.1`` with "at least 1.1x"), so widening the interval
    in code without changing the sentence fails; and an interval of ``[0, inf]`` holds
    for every outcome, so it asserts nothing and is refused.

    Raises:
        ValueError: the interval is ``[0, inf]`` (or inverted), or a bound is not in
            ``says``.

    Examples:
        >>> check_interval(1.1, math.inf, "Fix B takes at least 1.1x the copy's time")
        >>> check_interval(0.0, math.inf, "Fix B is slower than the copy")
        Traceback (most recent call last):
            ...
        ValueError: the claim 'Fix B is slower than the copy' bounds nothing: [0, inf] holds for every ratio
        >>> check_interval(1.0, math.inf, "Fix B takes at least 1.1x the copy's time")
        Traceback (most recent call last):
            ...
        ValueError: the claim "Fix B takes at least 1.1x the copy's time" does not state its bound 1 (it states 1.1)
    """
    if at_least <= 0 and math.isinf(at_most):
        raise ValueError(f"the claim {says!r} bounds nothing: [0, inf] holds for every ratio")
    if at_least > at_most:
        raise ValueError(f"the claim {says!r} has an empty interval [{at_least:g}, {at_most:g}]")
    stated = stated_numbers(says)
    for bound in (at_least, at_most):
        if bound > 0 and not math.isinf(bound) and not any(math.isclose(bound, s) for s in stated):
            shown = ", ".join(f"{s:g}" for s in sorted(stated)) or "no number"
            raise ValueError(
                f"the claim {says!r} does not state its bound {bound:g} (it states {shown})"
            )


LOG_ENV = "CASEBOOK_CLAIMS"
"""When set to a file path, every claim judged is appended to it as a JSON line (the
book's benchmark command collects a page's claims this way)."""


def _log(made: Claim) -> None:
    path = os.environ.get(LOG_ENV)
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({**asdict(made), "holds": made.holds}) + "\n")


def claims_table(claims: list[Claim]) -> Table:
    """The claims of one page as a table: sentence, ratio, interval, verdict."""
    rows = tuple(
        (c.says, f"{c.numerator} / {c.denominator}", f"{c.ratio:.2f}", c.bounds(), _verdict(c))
        for c in claims
    )
    return Table(("claim", "ratio", "measured", "asserted interval", ""), rows)


def _verdict(made: Claim) -> str:
    if not made.judged:
        return "not judged (busy machine)"
    return "holds" if made.margin == 1.0 else f"holds (A/A margin {made.margin:.2f}x)"

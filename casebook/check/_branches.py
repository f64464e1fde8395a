"""The ``drift`` family of the check: branches of ``lax.cond`` / ``lax.switch`` that disagree.

Two sources, so that every way of writing a conditional is covered:

* :func:`recorded_findings`: the calls that :func:`casebook.trace.record_cond_branches`
  saw (``jax.lax.cond`` looked up at call time); they carry both branches' names and
  every differing leaf, and they are recorded even when ``cond`` accepts the branches.
* :func:`error_findings`: the ``TypeError`` that jax raises when branch outputs differ,
  read line by line.  jax names the leaf (``at path ['c']``) and both types there, for
  ``lax.switch`` and for a ``cond`` imported as ``from jax.lax import cond`` as well.
"""

from __future__ import annotations

import re

from casebook import trace
from casebook.check._report import Finding

_WHY = "lax.cond and lax.switch need identical branch output types"
_NAMED = re.compile(r"^(true_fun|false_fun|branch ?\d+) is (.+?)(?: at \S+:\d+)?$")
_TYPES = re.compile(
    r"[Tt]he output of (?P<a>true_fun|false_fun|branch ?\d+)(?: at path (?P<path>.+?))? "
    r"has type (?P<ta>\S+) but the corresponding output of (?P<b>true_fun|false_fun|branch ?\d+) "
    r"has type (?P<tb>\S+?)(?:, so the (?P<kind>\w+) do not match)?[.;]?$"
)
_STRUCTURE = re.compile(
    r"(?P<a>true_fun|false_fun|branch ?\d+) output(?: at path (?P<path>.+?))? is a "
    r"(?P<ta>.+?) but (?P<b>true_fun|false_fun|branch ?\d+) output(?: at path .+?)? "
    r"is a (?P<tb>.+?), so (?P<kind>.+?)[.;]?$"
)
_KINDS = {"dtypes": "dtype", "shapes": "shape"}


def _fn_name(recorded: str) -> str:
    """A branch's short name from the name recorded by ``trace.record_cond_branches``
    (which is a ``repr`` for a ``functools.partial``)."""
    found = re.search(r"<function ([^ ]+) at ", recorded)
    return found.group(1).split(".")[-1] if found else recorded


def recorded_findings(calls: trace.CondCalls) -> list[Finding]:
    """Branch outputs of recorded ``lax.cond`` calls that differ in dtype, shape or
    structure (the weak type may differ: ``cond`` promotes it).

    Args:
        calls: what :func:`casebook.trace.record_cond_branches` recorded.

    Returns:
        One error per differing leaf.
    """
    findings = []
    for call in calls:
        true_name, false_name = _fn_name(call.true_name), _fn_name(call.false_name)
        for d in call.diff or ():
            if d.kind == "weak_type":
                continue
            findings.append(
                Finding(
                    "state drift",
                    "error",
                    f"lax.cond({true_name}, {false_name}) output{d.path}",
                    f"{d.kind}: {d.before} in {true_name}, {d.after} in {false_name}",
                    _WHY,
                )
            )
    return findings


def error_findings(error: BaseException) -> list[Finding]:
    """The differing leaves named in jax's error for branches of different types.

    Args:
        error: the exception that tracing ``update`` raised.

    Returns:
        One error per leaf that jax's message names, with the path, both types and the
        branch functions; empty when ``error`` is not about branch outputs.
    """
    text = str(error)
    if not isinstance(error, TypeError) or "branch" not in text:
        return []
    api = "lax.switch" if text.startswith("switch") else "lax.cond"
    names = {}
    for line in text.splitlines():
        named = _NAMED.match(line.strip())
        if named:
            names[named.group(1)] = named.group(2)
    findings = []
    for line in text.splitlines():
        line = line.strip().lstrip("* ").strip()
        match = _TYPES.search(line) or _STRUCTURE.search(line)
        if not match:
            continue
        a, b = match.group("a"), match.group("b")
        kind = match.group("kind") or "type"
        kind = _KINDS.get(kind, "structure" if match.re is _STRUCTURE else kind)
        where = f"{api} branch output{match.group('path') or ''}"
        findings.append(
            Finding(
                "state drift",
                "error",
                where,
                f"{kind}: {match.group('ta')} in {a} ({names.get(a, '?')}), "
                f"{match.group('tb')} in {b} ({names.get(b, '?')})",
                _WHY,
            )
        )
    return findings

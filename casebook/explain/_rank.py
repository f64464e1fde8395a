"""Which cards answer a traceback, each with its score and why: ``explain``'s ranking.

Three kinds of evidence, from the registry's data (:data:`casebook.cases.SIGNATURES`,
:data:`casebook.cases.FAMILIES`, the cases' messages):

* a case's wording, word for word (a distinctive :class:`~casebook.cases.Message` in the
  text): it wins (:data:`EXACT`), unless the wording is one of a family's patterns (``cond
  branches must have equal output types``), which any code prints; then it counts as
  :data:`SAME_WORDING`, and the frames and state decide;
* a family's pattern in the message (its placeholders' values give the reason: ``carry
  dtype mismatch on `s.max_dist['w']```), which makes the family a candidate (its section
  of the lessons page) and lets each of its signatures score: a frame it names
  (:data:`FRAME`), a leaf name of the state it names (:data:`HINT`), a mark
  (:data:`MARK`); the family's primary card scores without them;
* the frames: a family of library bugs (``library``) with no library frame and no state
  hint is no match; a drift wording raised by the user's own code (no library frame, no
  state hint, the user's frame last) is said to be the user's own loop or branch. The
  user's own frame that raised decides first: for a family whose callables are data
  (``data_frame``), a raising function of the user's that is no such callable (a schedule
  of theirs that branches on the count) is theirs, and the family does not count. A
  library call that is the family's own site (``sites``: ``inject_hyperparams`` calling a
  hyperparameter, ``multi_transform`` calling its labels) into a callable of the user's
  that is data makes the family a candidate whatever the message, and adds :data:`SITE`
  to its card.

:func:`rank` returns a :class:`Ranking`; :mod:`casebook.explain._answer` words it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from casebook.cases import (
    CASES,
    FAMILIES,
    SIGNATURES,
    BugFamily,
    Case,
    Message,
    Signature,
    normalize,
)
from casebook.explain._parse import LIMIT, Frame, Traceback, parse
from casebook.explain._patterns import search

EXACT = 100
SAME_WORDING = 5
FRAME = 3
HINT = 4
MARK = 4
PRIMARY = 1
SITE = 3
FAMILY = 0.5


@dataclass
class Candidate:
    """One answer: the owner (a case key, ``finding-N`` or ``family-KEY``), its score and
    the reasons, the signature and family it came from, the exact message (if any)."""

    owner: str
    score: float
    reasons: list[str] = field(default_factory=list)
    family: BugFamily | None = None
    signature: Signature | None = None
    case: Case | None = None
    message: Message | None = None
    exact: bool = False  # the case's wording, word for word, and not one any code prints


@dataclass
class Ranking:
    """The traceback read, the candidates best first, and the user's own frame where the
    user's own code raised a family's generic wording (``own``; its statement in ``says``)."""

    traceback: Traceback
    candidates: list[Candidate]
    own: Frame | None = None
    says: str = ""


def find(text: str, cases: Iterable[Case] = CASES) -> list[tuple[Case, Message]]:
    """The known messages that ``text`` (a traceback, or a message) contains, the longest
    first; empty when none does."""
    seen = normalize(text[-LIMIT:])
    found = [
        (case, message)
        for case in cases
        for message in case.messages
        if message.distinctive and normalize(message.text) in seen
    ]
    return sorted(found, key=lambda cm: -len(cm[1].text))


def _fill(template: str, values: dict[str, str]) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: values.get(m[1], m[0]), template)


def _generic(regex: str, wording: str) -> bool:
    """Whether a family's pattern matches ``wording`` and takes nothing specific from it
    (no path, dtype, type or name): a wording any code prints, such as ``cond branches
    must have equal output types but they differ.``"""
    values = search(regex, wording)
    return values is not None and not set(values) - {"api"}


def _family_hits(tb: Traceback, text: str) -> list[tuple[BugFamily, str, dict[str, str]]]:
    """Each family whose pattern the message holds: the reason and the values."""
    hits = []
    for family in FAMILIES:
        for pattern in family.patterns:
            if pattern.frames and not any(tb.has(f) for f in pattern.frames):
                continue
            values = search(pattern.regex, text)
            if values is not None:
                hits.append((family, _fill(pattern.reason, values), values))
                break
    return hits


def _is_data(family: BugFamily, frame: Frame) -> bool:
    """Whether the user's ``frame`` is a callable that is data (``family.data_frame``)."""
    return bool(re.search(family.data_frame, f"{frame.function} {frame.source}"))


def _theirs(tb: Traceback, family: BugFamily) -> bool:
    """Whether the frame that raised is the user's own and, for a family whose callables
    are data, no such callable: the user's own code decides, the family does not count."""
    if not family.data_frame or not tb.frames or tb.own_frame() is not tb.frames[-1]:
        return False
    return not _is_data(family, tb.frames[-1])


def _site(tb: Traceback, family: BugFamily) -> str:
    """The reason when the traceback passes through one of the family's ``sites`` into a
    frame of the user's that is data; "" when it does not."""
    for i in range(len(tb.frames) - 1, -1, -1):
        site = tb.frames[i]
        if not any(site.matches(s) for s in family.sites):
            continue
        own = [f for f in tb.frames[i + 1 :] if tb.is_own(f)]
        if own and _is_data(family, own[0]):
            return (
                f"`{site.function}` ({site.where}) called your `{own[0].function}` "
                f"({own[0].where}) as it calls a schedule, a mask or labels"
            )
    return ""


def _score(sig: Signature, tb: Traceback, text: str, values: dict[str, str]) -> Candidate | None:
    """The signature's candidate, or None when nothing of it is in the traceback."""
    if any(tb.has(f) for f in sig.not_frames):
        return None
    found = Candidate(sig.owner, 0.0, signature=sig)
    for name in sig.hints:
        if re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", text):
            where = values.get("path", "") if name in values.get("path", "") else name
            found.score += HINT
            found.reasons.append(f"`{where}`: {sig.says}")
            break
    for mark in sig.marks:
        got = search(mark.regex, text)
        if got is not None:
            found.score += MARK
            found.reasons.append(_fill(mark.reason, got))
    for name in sig.frames:
        frame = tb.has(name)
        if frame:
            found.score += FRAME
            found.reasons.append(f"the traceback passes through `{frame.function}` ({frame.where})")
            break
    if found.score == 0 and not sig.primary:
        return None
    if sig.primary:
        found.score += PRIMARY
    return found


def _own(tb: Traceback, values: dict[str, str]) -> str:
    """The sentence that says the user's own loop or branch raised it."""
    frame = tb.own_frame()
    assert frame is not None
    api = next(
        (
            a
            for a in ("cond", "switch", "scan", "while_loop", "fori_loop")
            if f"{a}(" in frame.source
        ),
        values.get("api", "loop"),
    )
    a, b = values.get("dtype", "one type"), values.get("dtype2", "another")
    if api in ("cond", "switch"):
        did = f"returns {a} in one branch and {b} in the other"
    else:
        did = f"takes a carry of {a} and returns {b}"
        if "path" in values:
            did += f" at `{values['path']}`"
    return f"your own `lax.{api}` at {frame.where} {did}: no library frame is in the traceback"


def rank(text: str) -> Ranking:
    """The candidates for ``text``, best first (see the module)."""
    tb = parse(text)
    message = " ".join(f"{tb.exc_type}: {tb.message}".split()) if tb.exc_type else ""
    hits = _family_hits(tb, message) if message else []
    sited = {}
    for family in FAMILIES:
        reason = _site(tb, family) if family.sites and message else ""
        if reason:
            sited[family.key] = reason
            if not any(f.key == family.key for f, _, _ in hits):
                hits.append((family, reason, {}))
    hits = [(f, r, v) for f, r, v in hits if not _theirs(tb, f)]
    exact = find(text)
    generic = {f.key for f, _, _ in hits}
    by_owner: dict[str, Candidate] = {}

    def add(c: Candidate) -> None:
        old = by_owner.get(c.owner)
        if old is None or c.score > old.score:
            by_owner[c.owner] = c

    for case, msg in exact:
        wording = " ".join(msg.text.split())
        family_wording = any(_generic(p.regex, wording) for f in FAMILIES for p in f.patterns)
        score = SAME_WORDING if family_wording and generic else EXACT + len(msg.text) / 1000
        add(
            Candidate(
                case.key,
                score,
                [
                    f"this case's wording, through {msg.api}; any code whose branches or "
                    "carry disagree prints it too"
                    if score == SAME_WORDING
                    else f"the book's wording, word for word (through {msg.api})"
                ],
                case=case,
                message=msg,
                exact=score >= EXACT,
            )
        )
    own: Frame | None = None
    says = ""
    for family, reason, values in hits:
        scored = [
            c
            for s in SIGNATURES
            if s.family == family.key and (c := _score(s, tb, message, values))
        ]
        evidence = [c for c in scored if c.score > PRIMARY]
        if not tb.libraries and not evidence:
            if family.library:
                continue
            if tb.own_frame() is not None:
                own, says = tb.own_frame(), _own(tb, values)
                for c in list(by_owner.values()):
                    if c.score < EXACT:
                        del by_owner[c.owner]
                scored = []
        for c in scored:
            c.family = family
            c.reasons.insert(0, reason)
            if c.signature is not None and c.signature.primary and family.key in sited:
                c.score += SITE
                if sited[family.key] != reason:
                    c.reasons.insert(1, sited[family.key])
            prior = by_owner.get(c.owner)
            if prior is not None and prior.message is not None:
                c.score += prior.score
                c.reasons += prior.reasons
                c.message, c.case, c.exact = prior.message, prior.case, prior.exact
            add(c)
        add(Candidate(f"family-{family.key}", FAMILY, [reason], family=family))
    ranked = sorted(by_owner.values(), key=lambda c: -c.score)
    return Ranking(tb, ranked, own, says)

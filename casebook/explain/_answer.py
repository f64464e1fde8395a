"""The words of ``explain``'s answer, from a :class:`~casebook.explain._rank.Ranking`.

The best one or two candidates, each with why it matched; for a variant (no wording of
the book's word for word), a line on how it differs from the book's own trigger; for a
drift or non-array-leaf family, the ``check_optimizer(...)`` call to run on the reader's
set-up next; where the user's own code raised a family's generic wording, that first.
One line, "no match", where nothing matched. The IPython hint is :func:`hint_line`, one
line from the same ranking.
"""

from __future__ import annotations

import textwrap

from casebook.cases import SIGNATURES, BugFamily, Case, Message, get
from casebook.explain._rank import Candidate, Ranking
from casebook.project import BOOK_URL

ERRORS_PAGE = BOOK_URL + "book/errors.html"
NO_MATCH = (
    "casebook explain: no match: no known message or family of bugs in this text. Every "
    f"message the book knows is on the Errors page: {ERRORS_PAGE}"
)
#: The families whose bugs the check finds before anything runs.
CHECKED = ("drift", "leaf", "donation")
SHOWN = 2


def url(docname: str, anchor: str = "") -> str:
    """The published page ``docname`` (``notebooks/01-...``, ``book/lessons``), at ``anchor``."""
    return BOOK_URL + docname + ".html" + (f"#{anchor}" if anchor else "")


def card(case: Case, message: Message) -> str:
    """A case's card, as text: the case, what was matched, today's wording, the fix, why."""
    today = case.today
    now = (
        f"    {today[0].exc_type}: {today[0].text.splitlines()[0]}  ({today[0].versions})"
        if today
        else "    (today's releases no longer raise it)"
    )
    lines = [
        f"{case.issue.label} (case {case.number}): {case.summary.replace('`', '')}",
        f"  you hit: {message.exc_type}: {message.text.splitlines()[0]}",
        f"           ({message.versions}; through {message.api})",
        "  today:",
        now,
    ]
    _, do = case.do_this
    if do:
        said = case.card.get("do", "runs on today's releases")
        lines += [f"  do this ({said}):", textwrap.indent(do.strip(), "    ")]
    if case.why:
        lines += ["  why:", textwrap.indent(textwrap.fill(case.why, 88), "    ")]
    if case.still_open:
        lines += ["  still open:", textwrap.indent(textwrap.fill(case.still_open, 88), "    ")]
    lines.append(f"  the proof: {url(case.docname, message.anchor)}")
    return "\n".join(lines)


def _why(c: Candidate) -> list[str]:
    return [f"  why it matched: {'; '.join(dict.fromkeys(c.reasons))}"]


def _next(c: Candidate) -> list[str]:
    """The check to run next, for a family the check finds."""
    family = c.family
    if family is None or family.key not in CHECKED:
        return []
    call = (c.signature.check if c.signature and c.signature.check else "") or family.check
    return [
        "  next, on your set-up (it traces init and update; nothing runs):",
        "    from casebook.check import check_optimizer",
        f"    print({call.split('  #')[0]})"
        + (f"  #{call.split('  #')[1]}" if "  #" in call else ""),
    ]


def _named(family: BugFamily) -> str:
    """The family by its number and name (``families.toml``), and its section's address."""
    return f"family {family.number}, {family.title.lower()}: {url(family.docname, family.anchor)}"


def _variant(c: Candidate, r: Ranking) -> list[str]:
    """The card of a variant: its owner, why, how it differs, the check."""
    sig, family = c.signature, c.family
    assert family is not None
    if sig is None:  # the family itself
        cases = sorted({s.label for s in SIGNATURES if s.family == family.key})
        return [
            f"Family {family.number} of the "
            f"{'lessons page' if family.docname == 'book/lessons' else 'book'}: "
            f"{family.title.lower()}",
            *_why(c),
            f"  the book's cases and findings of this family: {', '.join(cases)}",
            f"  the family: {url(family.docname, family.anchor)}",
            *_next(c),
        ]
    family_line = f"  the family: {_named(family)}"
    yours = f"{r.traceback.exc_type}: {r.traceback.message.splitlines()[0]}"[:160]
    if c.case is not None and c.message is not None:  # the case's wording, and its signature
        lines = [card(c.case, c.message), *_why(c)]
    else:
        title = sig.title or (
            get(sig.owner).summary if not sig.owner.startswith("finding-") else ""
        )
        lines = [f"{sig.label}: {title.replace('`', '')}", *_why(c)]
    if sig.differs and not c.exact:
        said = f"how yours differs: {sig.differs}; yours raised {yours}"
        lines.append(textwrap.fill(said, 92, initial_indent="  ", subsequent_indent="    "))
    if c.message is None:
        lines.append(f"  the page: {url(sig.docname, sig.anchor)}")
    lines.append(family_line)
    return lines + _next(c)


def shown(r: Ranking) -> list[Candidate]:
    """The best :data:`SHOWN` candidates, a family's own section left out where a case or
    finding of that family is shown (its card links the family)."""
    best: list[Candidate] = []
    for c in r.candidates:
        if len(best) == SHOWN:
            break
        if c.signature is None and c.case is None and any(b.family == c.family for b in best):
            continue
        best.append(c)
    return best


def answer(r: Ranking) -> str:
    """The answer to a ranking, as ``explain`` prints it."""
    if not r.candidates:
        return NO_MATCH
    parts = []
    if r.own is not None:
        family = r.candidates[0].family
        parts.append(
            f"casebook explain: {r.says}.\n  This is the mistake of the book's family "
            f"{family.number if family else ''}, in code of your own; the family's pages follow."
        )
    for c in shown(r):
        if c.family is None and c.case is not None and c.message is not None:
            parts.append(card(c.case, c.message) + "\n" + "\n".join(_why(c)))
        else:
            parts.append("\n".join(_variant(c, r)))
    return "\n\n".join(parts)


def hint_line(r: Ranking) -> str | None:
    """The IPython hint: one line naming the best candidate and where its fix is."""
    if not r.candidates:
        return None
    c = r.candidates[0]
    if r.own is not None and c.family is not None:
        return f"casebook: {r.says}; see {url(c.family.docname, c.family.anchor)}"
    if c.case is not None and c.message is not None:
        return (
            f"casebook: {'this is' if c.exact else 'this looks like'} "
            f"{c.case.issue.label} (case {c.case.number}, {c.message.versions}); "
            f"the fix is on its card: {url(c.case.docname)} "
            "(or run `python3 -m casebook explain` on the traceback)"
        )
    if c.signature is not None:
        label, page = c.signature.label, url(c.signature.docname, c.signature.anchor)
    else:
        assert c.family is not None
        label, page = f"family {c.family.number}", url(c.family.docname, c.family.anchor)
    return (
        f"casebook: like {label} ({c.reasons[0]}); see {page} "
        "(or run `python3 -m casebook explain` on the traceback)"
    )

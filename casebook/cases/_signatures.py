"""The bug families and their signatures: the registry's data for matching a variant.

A case's wordings (:class:`~casebook.cases.Message`) answer a traceback that holds one of
them word for word. A reader's own variant (another optimizer, another non-array leaf,
another loop) prints another wording of the same bug, so the registry also knows each
family of the lessons page (``casebook/check/families.toml``: its message patterns)
and, in each case folder's ``case.toml`` and in ``findings/findings.toml``, ``[[signature]]``
entries that say which traceback belongs to that case or finding: the family, the frames
(``"linesearch.py:_value_and_slope_on_line"``) that must or must not be in it, and the
state-path hints (``max_dist``) that name the optimizer's state. ``explain`` scores them
(``casebook.explain``); the Errors page groups its messages by family and states the
patterns in words.

Standard library only, like the rest of the registry.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "FAMILIES_FILE",
    "BugFamily",
    "Pattern",
    "Signature",
    "family_words",
    "read_families",
    "signatures",
    "validate",
]

FAMILIES_FILE = Path(__file__).resolve().parent.parent / "check" / "families.toml"
"""The families' data, kept with the check (whose report links to them); read as a file, so
the registry imports no jax."""


@dataclass(frozen=True)
class Pattern:
    """One message pattern of a family: ``regex`` (with placeholders such as ``{path}``,
    expanded by ``casebook.explain``), the ``reason`` explain prints when it matches
    (with the placeholders' values) and what it ``says`` in words (the Errors page)."""

    regex: str
    reason: str
    says: str
    frames: tuple[str, ...] = ()  # it counts only with one of these frames in the traceback


@dataclass(frozen=True)
class BugFamily:
    """One family of the lessons page: its number, name and words, its patterns, the
    check's name for it (``""``: the check does not see it), the ``check_optimizer`` call
    to run next, and whether only a library frame (or a state hint) makes a match
    (``library``; false for the drift family, whose wordings the user's own loops print
    too). ``cases`` are its cases that raise nothing (no signature names their family)."""

    key: str
    number: int
    title: str
    check_family: str
    anchor: str  # the label of its section of the lessons page, the family's card
    check: str
    library: bool
    patterns: tuple[Pattern, ...]
    docname: str = "book/lessons"
    what: str = ""
    found: str = ""
    cases: tuple[str, ...] = ()
    data_frame: str = ""  # a user frame's function or source that marks a callable as data
    sites: tuple[str, ...] = ()  # library frames that call a callable they were given


@dataclass(frozen=True)
class Signature:
    """What marks a traceback of one family as one case's or one finding's.

    ``owner`` is the case key (``optax-828``) or ``finding-N``; ``label`` how a reader
    names it (``optax#828 (case 1)``, ``check-findings §2``); ``docname`` and ``anchor``
    its page. ``frames`` are ``"file.py"`` or ``"file.py:function"`` suffixes of the
    traceback's frames, each one present adding to the score; a frame of ``not_frames``
    rules the signature out. ``hints`` are leaf names of the optimizer's state
    (``max_dist``), each named in the message adding to the score; ``says`` what they
    identify (``DoG's state``). ``marks`` are further patterns of the message, each a
    :class:`Pattern` whose ``reason`` says what it shows (a 32-bit state meeting 64-bit
    values). ``title`` is what the owner is about, where its page's title does not say it
    (a finding). ``primary`` marks the family's own card, the answer when
    only the family's pattern (and a library frame) matched. ``differs`` says how the
    book's own trigger differs from a variant; ``check`` replaces the family's
    ``check_optimizer`` call where the owner needs another one.
    """

    family: str
    owner: str
    label: str
    docname: str
    anchor: str = ""
    frames: tuple[str, ...] = ()
    not_frames: tuple[str, ...] = ()
    hints: tuple[str, ...] = ()
    marks: tuple[Pattern, ...] = ()
    says: str = ""
    title: str = ""
    differs: str = ""
    check: str = ""
    primary: bool = False


def read_families(path: Path = FAMILIES_FILE) -> tuple[BugFamily, ...]:
    """The families of ``families.toml``, in the lessons page's order."""
    with open(path, "rb") as f:
        data = tomllib.load(f)
    return tuple(
        BugFamily(
            key=row["key"],
            number=row["number"],
            title=row["title"],
            check_family=row["check_family"],
            anchor=row["anchor"],
            check=row["check"],
            library=row["library"],
            docname=row.get("docname", "book/lessons"),
            what=row["what"],
            found=row["found"],
            cases=tuple(row.get("cases", ())),
            data_frame=row.get("data_frame", ""),
            sites=tuple(row.get("sites", ())),
            patterns=tuple(
                Pattern(p["regex"], p["reason"], p["says"], tuple(p.get("frames", ())))
                for p in row.get("pattern", ())
            ),
        )
        for row in sorted(data["family"], key=lambda r: r["number"])
    )


def signatures(
    rows: Iterable[Mapping[str, Any]], owner: str, label: str, docname: str
) -> tuple[Signature, ...]:
    """The ``[[signature]]`` rows of one case folder (or of the findings, where each row
    names its ``finding`` number), read into :class:`Signature`."""
    out = []
    for row in rows:
        row = dict(row)
        number = row.pop("finding", None)
        who, name = (f"finding-{number}", f"{label} §{number}") if number else (owner, label)
        out.append(
            Signature(
                family=row.pop("family"),
                owner=who,
                label=name,
                docname=docname,
                anchor=row.pop("anchor", ""),
                frames=tuple(row.pop("frames", ())),
                not_frames=tuple(row.pop("not_frames", ())),
                hints=tuple(row.pop("hints", ())),
                marks=tuple(
                    Pattern(m["regex"], m["reason"], m.get("says", m["reason"]))
                    for m in row.pop("marks", ())
                ),
                **row,
            )
        )
    return tuple(out)


def validate(found: Iterable[Signature], families: Iterable[BugFamily]) -> tuple[Signature, ...]:
    """``found``, unchanged, once each names a family of ``families`` (a typo in a case
    folder's ``family`` fails the registry's import, not a reader's ``explain``)."""
    keys = {f.key for f in families}
    found = tuple(found)
    for s in found:
        if s.family not in keys:
            raise ValueError(
                f"{s.owner}: [[signature]] names family {s.family!r}, not one of {sorted(keys)}"
            )
    return found


_WORDS = re.compile(r"\{(family|number|name):([a-z_]+)\}")


def family_words(text: str, families: Iterable[BugFamily]) -> str:
    """``text`` with each ``{family:KEY}`` written ``Family 1, state that changes type``,
    ``{number:KEY}`` as ``Family 1`` and ``{name:KEY}`` as ``state that changes type``,
    from ``families`` (the workshop plan's titles and key points name families so)."""
    by_key = {f.key: f for f in families}

    def one(m: re.Match[str]) -> str:
        f = by_key.get(m.group(2))
        if f is None:
            raise ValueError(f"{m.group(0)} names no family of families.toml: {sorted(by_key)}")
        return {
            "family": f"Family {f.number}, {f.title.lower()}",
            "number": f"Family {f.number}",
            "name": f.title.lower(),
        }[m.group(1)]

    return _WORDS.sub(one, text)

"""A case page's reader-facing text that its case folder is the one source of.

Parts of a case notebook are written from the case's data, never by hand:

* **the card**, the page's first Markdown cell (``[card]`` of ``case.toml``): a short title;
  today's message as a text block; "You probably wrote", ``scripts/wrong.py``; "Do this",
  ``scripts/fix.py`` (or the upgrade command, where the fix is one) and what it prints; why;
  what is still open; the older wordings in a dropdown;
* **the card's check**, a hidden cell right after the set-up cell (tagged ``card-check``): it
  runs ``wrong.py`` where the card says it fails and asserts the card's message, and runs
  ``fix.py`` (or, for an upgrade, ``wrong.py``) on today's releases and asserts the line the
  card says it prints;
* **the story's repro cell** (tagged ``reporter``), whose code after its ``%%on_release``
  line is ``scripts/reporter.py``, and its **fix cell** (tagged ``reporter-fix``), which is
  ``scripts/reporter_fix.py``;
* **each exercise's "What a correct answer prints"**, from ``[answers]``;
* **the facts table** under the story's repro (``[facts]``, with the issue's link, title
  and date from ``[issue]`` and the libraries from ``[case]``).

The page's hidden checks compare what runs with the same data (``CASE.today_shown``,
``CASE.answer(label)``), so the text a reader sees and the text a check holds it to are one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from casebook.cases import Case

REPORTER_TAG, FIX_TAG, CHECK_TAG = "reporter", "reporter-fix", "card-check"


ANSWER = re.compile(
    r"(:label: (case\d+-ex\d+)\n.*?:::\{dropdown\} What a correct answer prints\n```text\n)"
    r"(.*?)(```\n:::)",
    re.S,
)
"""An exercise's label, then its dropdown's text block (group 3: what the reader sees)."""


FOLDED = "# ... your lines above, unchanged"
"""The first line of a fix shown as what differs from "You probably wrote"."""


def shown_fix(wrong: str, language: str, do: str) -> list[str]:
    """The lines of "Do this" on the card's first screen: where the fix is Python that
    begins with two or more lines of "You probably wrote", :data:`FOLDED` and what follows;
    else the whole fix."""
    wrong_lines, lines = wrong.splitlines(), do.splitlines()
    shared = 0
    while shared < min(len(wrong_lines), len(lines)) and wrong_lines[shared] == lines[shared]:
        shared += 1
    return [FOLDED, *lines[shared:]] if language == "python" and shared >= 2 else lines


def fix_block(wrong: str, language: str, do: str) -> str:
    """The card's "Do this" as a reader needs it on the first screen (:func:`shown_fix`),
    each line that is not in the wrong code marked (``emphasize-lines``), the whole program
    one click away, in a dropdown."""
    shown = shown_fix(wrong, language, do)
    if shown[0] != FOLDED:
        return f"```{language}\n{do}\n```"
    wrong_lines = wrong.splitlines()
    changed = [str(i + 1) for i, line in enumerate(shown) if i and line not in wrong_lines]
    marked = f":emphasize-lines: {','.join(changed)}\n" if changed else ""
    body = "\n".join(shown)
    return (
        f"```{{code-block}} python\n{marked}{body}\n```\n\n"
        f":::{{dropdown}} The whole program\n```python\n{do}\n```\n:::"
    )


def _prints(card: Mapping[str, str]) -> str:
    """The line the fix prints, and where the card's check ran it: today's releases, and
    ``fixed_on`` where the card names one (the release an upgrade names, or the stack where
    the wrong code fails), so the advice is proven where the bug is, not only today."""
    printed = card.get("fix_prints", "").rstrip("\n")
    if not printed or "\n" in printed:
        return ""
    there = card.get("fixed_on")
    where = f", on today's releases and on `{there}`" if there else ""
    return f"It prints `{printed}`{where}.\n\n"


def card_markdown(case: Case) -> str:
    """The card cell's Markdown, from ``case.toml``'s ``[card]`` and the card's scripts."""
    card = case.card
    heading = case.symptom["heading"]  # the case's kind's (casebook/cases/symptoms.toml)
    language, do = case.do_this
    prints = _prints(card)
    return (
        f"# {card['title']}\n\n"
        f"::::{{admonition}} {heading}\n:class: tip casebook-card\n\n"
        f"{card['lead']}\n\n```text\n{card['today']}\n```\n\n"
        f"**You probably wrote**\n\n```python\n{case.wrong}\n```\n\n"
        f"**Do this**: {card['do']}.\n\n{fix_block(case.wrong, language, do)}\n\n{prints}"
        f"**Why:** {case.why}\n\n**Still open:** {case.still_open}\n\n"
        f":::{{dropdown}} Older wordings\n{card['older']}\n:::\n::::"
    )


_STATED = re.compile(r"\b(jax|optax|equinox|diffrax) (\d+\.\d+(?:\.\d+)?)\b")


def stated_versions(case: Case) -> list[tuple[str, str]]:
    """The releases the card's lead names for today's run, as in "(jax 0.12, optax 0.2.8)":
    the card's check asserts that its run imported them (a lead about a historical release
    names it in ``fails_on`` instead)."""
    if case.card.get("fails_on", "current") != "current":
        return []
    return _STATED.findall(" ".join(re.findall(r"\(([^)]*)\)", case.card.get("lead", ""))))


def _versions_check(stated: list[tuple[str, str]]) -> str:
    """The card check's lines asserting the versions the card's lead names, run on the
    lock's stack only (a GPU image or Colab brings its own jax: there the behaviour is
    what the check asserts)."""
    if not stated:
        return ""
    return (
        "    from casebook.status import stack\n\n"
        "    if stack.ran_on().on_lock:  # the card names the lock's releases\n"
        + "".join(
            f'        assert (wrong.version("{name}") + ".").startswith("{version}."), wrong.versions\n'
            for name, version in stated
        )
    )


def card_check(case: Case) -> str:
    """The hidden cell after the card: the card's two programs, run and asserted (the wrong
    code's message, or what it prints where the bug raises nothing; the fix on today's
    releases and, where the card names it, on ``fixed_on`` too), inside
    a function, so that the page's own names stay as the story binds them. The workshop's
    editions leave the cell out (its tag, ``card-check``)."""
    fails_on = case.card.get("fails_on", "current")
    return (
        "# The card's code, run: \"You probably wrote\" raises the card's message where the card\n"
        '# says, and "Do this" runs on today\'s releases and prints what the card shows.\n'
        "def _check_the_card():\n"
        "    from casebook import cases, releases\n\n"
        f'    card = cases.get("{case.key}")\n'
        f'    wrong = releases.run(card.wrong, "{fails_on}")\n'
        + (
            '    releases.expect(wrong, raises=card.card["today"].split(":")[0])\n'
            "    assert card.today_shown(wrong.exc_type, wrong.message), wrong.message\n"
            if case.raises
            else "    releases.expect(wrong)  # the bug raises nothing: it prints the symptom\n"
            "    assert card.today_printed(wrong.stdout), wrong.stdout\n"
        )
        + _versions_check(stated_versions(case))
        + "    fixed = releases.expect(releases.run(card.fix_program))\n"
        '    assert fixed.stdout == card.card["fix_prints"], fixed.stdout\n'
        + (
            f'    there = releases.expect(releases.run(card.fix_program, "{fixed_on}"))\n'
            '    assert there.stdout == card.card["fix_prints"], there.stdout\n'
            if (fixed_on := case.card.get("fixed_on"))
            else ""
        )
        + "\n\n_check_the_card()"
    )


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _check_cell(source: str) -> dict:
    return {
        "cell_type": "code",
        "execution_count": None,
        "id": CHECK_TAG,
        "metadata": {"tags": [CHECK_TAG, "remove-cell"]},
        "outputs": [],
        "source": _lines(source),
    }


def rewrite_card(cells: list[dict], case: Case) -> list[dict]:
    """``cells`` with the first Markdown cell replaced by the case's card and its check cell
    right after the set-up cell (the first code cell); the story's repro cell's code (after
    its magic line) is ``reporter.py`` and its fix cell ``reporter_fix.py``, where the page
    has them."""
    at = next(i for i, c in enumerate(cells) if c["cell_type"] == "markdown")
    cells = [c for c in cells if CHECK_TAG not in c.get("metadata", {}).get("tags", [])]
    cells[at] = dict(cells[at], source=_lines(card_markdown(case)))
    setup = next(i for i, c in enumerate(cells) if c["cell_type"] == "code")
    cells.insert(setup + 1, _check_cell(card_check(case)))
    for i, cell in enumerate(cells):
        tags = cell.get("metadata", {}).get("tags", [])
        if REPORTER_TAG in tags and case.reporter:
            magic = "".join(cell["source"]).split("\n", 1)[0]
            cells[i] = dict(cell, source=_lines(magic + "\n" + case.reporter))
        elif FIX_TAG in tags and case.reporter_fix:
            cells[i] = dict(cell, source=_lines(case.reporter_fix))
    return cells


FACTS_ROW = "| **Upstream** |"
"""The facts table's first row: the Markdown cell that holds it begins with the table."""


def facts_table(case: Case) -> str:
    """The facts table, as the page shows it, from the case's data."""
    facts, issue = case.facts, case.issue
    note = facts.get("libraries_note", "")
    rows = [
        ("Upstream", f'[{issue.label}]({issue.url}) "{issue.title}", opened {issue.opened}'),
        ("Libraries", ", ".join(case.libraries) + (f" {note}" if note else "")),
        ("Affected releases", facts["affected"]),
        ("First fixed release", facts["first_fixed"]),
        ("Symptom", facts["symptom"]),
        ("Lesson", facts["lesson"]),
    ]
    rows[0] = (rows[0][0], rows[0][1] + facts["upstream"])
    return "| | |\n|---|---|\n" + "\n".join(f"| **{k}** | {v} |" for k, v in rows)


def rewrite_facts(cells: list[dict], case: Case) -> list[dict]:
    """``cells`` with the table that opens the facts cell written from ``[facts]`` (a case
    without ``[facts]`` keeps its page's table)."""
    if not case.facts:
        return cells
    for i, cell in enumerate(cells):
        text = "".join(cell["source"])
        if cell["cell_type"] == "markdown" and FACTS_ROW in text:
            lines = text.split("\n")
            end = next((k for k, line in enumerate(lines) if not line.startswith("|")), len(lines))
            rest = "\n".join(lines[end:])
            cells[i] = dict(cell, source=_lines(facts_table(case) + ("\n" + rest if rest else "")))
    return cells


def answers_in(text: str) -> list[tuple[str, str]]:
    """``(label, printed)`` of each exercise answer block of a Markdown text."""
    return [(m.group(2), m.group(3)) for m in ANSWER.finditer(text)]


def rewrite_answers(cells: list[dict], case: Case) -> list[dict]:
    """``cells`` with each exercise's "What a correct answer prints" from ``[answers]``;
    an exercise whose answer the data lacks raises, naming the label."""
    out = []
    for cell in cells:
        if cell["cell_type"] == "markdown":
            text = "".join(cell["source"])
            new = ANSWER.sub(lambda m: m.group(1) + case.answer(m.group(2)) + m.group(4), text)
            if new != text:
                cell = dict(cell, source=new.splitlines(keepends=True))
        out.append(cell)
    return out

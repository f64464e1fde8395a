"""The families' data (``casebook/check/families.toml``, the ``[[signature]]`` entries of
the case folders and of the findings) holds together, and the check's report links back
to the family it found."""

from __future__ import annotations

import re

import pytest

from casebook import cases
from casebook.explain._patterns import compile_pattern
from casebook.project import ROOT


def test_each_family_s_anchor_labels_its_section():
    for family in cases.FAMILIES:
        page = (ROOT / f"{family.docname}.md").read_text()
        assert f"\n({family.anchor})=\n## Family {family.number}: " in page, family.anchor


def test_every_pattern_compiles_and_says_something():
    for family in cases.FAMILIES:
        assert family.patterns or not family.check, f"{family.key}: a check, and no message?"
        for p in family.patterns:
            compile_pattern(p.regex)
            assert p.says and p.reason and "{" not in re.sub(r"\{\w+\}", "", p.reason)
    for sig in cases.SIGNATURES:
        for mark in sig.marks:
            compile_pattern(mark.regex)


def test_every_case_and_finding_owner_has_a_page_and_every_case_a_signature():
    keys = {c.key for c in cases.CASES}
    for case in cases.CASES:  # a bug that raises nothing (a leak) leaves no traceback
        assert case.signatures or not case.raises, f"{case.key}: no [[signature]] (CONTRIBUTING.md)"
    for sig in cases.SIGNATURES:
        assert sig.owner in keys or re.fullmatch(r"finding-\d+", sig.owner), sig.owner
        assert sig.says and sig.differs, sig.owner
        assert (ROOT / f"{sig.docname}.ipynb").is_file(), sig.docname
        if sig.owner.startswith("finding-"):
            assert sig.title, sig.owner
    for family in cases.FAMILIES:
        primary = [s for s in cases.SIGNATURES if s.family == family.key and s.primary]
        assert len(primary) <= 1, family.key


def test_a_finding_s_number_is_a_section_of_the_findings_page():
    page = (ROOT / "book" / "check-findings.md").read_text()
    for sig in cases.SIGNATURES:
        if sig.owner.startswith("finding-"):
            number = sig.owner.split("-")[1]
            assert re.search(rf"^## {number}\. ", page, re.M), sig.owner


def test_a_signature_naming_no_family_is_refused():
    from casebook.cases._signatures import signatures, validate

    rows = [{"family": "drfit", "says": "x", "differs": "y"}]
    bad = signatures(rows, "optax-1", "optax#1 (case 9)", "notebooks/x")
    with pytest.raises(ValueError, match="names family 'drfit'"):
        validate(bad, cases.FAMILIES)
    assert validate(cases.SIGNATURES, cases.FAMILIES) == cases.SIGNATURES


def test_the_check_s_report_links_to_the_family_it_found():
    import jax.numpy as jnp
    import optax

    from casebook.check import check_optimizer

    report = check_optimizer(
        optax.scale_by_distance_over_gradients(), {"w": jnp.ones(3, jnp.bfloat16)}
    )
    drift = cases.family("drift")
    assert f"book/lessons.html#{drift.anchor}" in str(report).splitlines()[-1]
    ok = check_optimizer(optax.sgd(0.1), {"w": jnp.ones(2)})
    assert "lessons.html" not in str(ok)

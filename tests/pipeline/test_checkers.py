"""The checker protocol: a registry by kind, and the extraction check behind it."""

from __future__ import annotations

import pytest

from pipeline.checkers import (
    CheckResult,
    checker_class,
    kinds,
    register,
)
from pipeline.checkers.extraction import ExtractionChecker
from pipeline.types import Document

TEXT = "The hearing took place in Toronto on 17 January 2012."
DOCUMENTS = {"d1": Document(id="d1", text=TEXT)}


class FixedScorer:
    """Supports a hypothesis when its value is in the span."""

    name = "fixed"
    threshold = 0.5

    def score_pairs(self, pairs, *, progress=False):
        return [0.9 if h.split(": ", 1)[1] in span else 0.1 for span, h in pairs]


def _claims(checker, *rows):
    base = {"document_id": "d1", "type": "GPE"}
    return [checker.claim_from_json({**base, **row}) for row in rows]


def test_extraction_findings_carry_the_aligned_span_as_evidence():
    checker = checker_class("extraction")(DOCUMENTS)
    claims = _claims(
        checker,
        {"id": "found", "value": "Toronto", "context": "took place in Toronto"},
        {"id": "wrong", "value": "Ottawa", "context": "took place in Toronto"},
        {"id": "absent", "value": "Paris", "context": "a galaxy far, far away"},
        {"id": "orphan", "value": "x", "context": "x", "document_id": "nowhere"},
    )
    result = checker.check(claims, scorer=FixedScorer())

    assert isinstance(result, CheckResult)
    by_id = {f.claim_id: f for f in result.findings}
    assert list(by_id) == ["found", "wrong", "absent"]
    assert ["orphan" in str(e) for e in result.errors] == [True]
    found = by_id["found"]
    assert (found.hypothesis, found.verdict, found.reason, found.score) == (
        "GPE: Toronto",
        "safe",
        None,
        0.9,
    )
    [evidence] = found.evidence
    assert evidence.role == "aligned" and evidence.source == "d1"
    assert (
        TEXT[evidence.start : evidence.end]
        == evidence.text
        == ("took place in Toronto")
    )
    assert (by_id["wrong"].verdict, by_id["wrong"].reason) == (
        "unsafe",
        "not_supported",
    )
    # Not found in the document: unsafe before any scorer runs.
    absent = by_id["absent"]
    assert (absent.verdict, absent.reason, absent.score) == (
        "unsafe",
        "not_in_document",
        None,
    )


def test_without_a_scorer_a_found_context_is_unscored_never_safe():
    checker = ExtractionChecker(DOCUMENTS)
    [found, invented] = checker.check(
        _claims(
            checker,
            {"id": "a", "value": "Ottawa", "context": "in Toronto"},
            {"id": "b", "value": "Paris", "context": "a quiet week in Lyon and Nice"},
        )
    ).findings
    assert (found.verdict, found.score) == ("unscored", None)
    assert (invented.verdict, invented.reason) == ("unsafe", "not_in_document")


def test_a_new_kind_registers_once_and_is_found_by_its_name():
    from tests.kinds.statement.checker import KIND

    assert KIND in kinds() and "extraction" in kinds()
    checker = checker_class(KIND)({"d": Document(id="d", text="Rain fell.")})
    claim = checker.claim_from_json(
        {"id": "1", "document_id": "d", "type": "statement", "value": "snow fell"}
    )
    (finding,) = checker.check([claim]).findings
    assert (finding.verdict, finding.premise) == ("unsafe", "Rain fell.")

    class Impostor:
        kind = KIND

    with pytest.raises(ValueError, match="already"):
        register(Impostor)


def test_an_unknown_kind_names_the_known_ones():
    with pytest.raises(KeyError, match="known: .*extraction"):
        checker_class("tarot")

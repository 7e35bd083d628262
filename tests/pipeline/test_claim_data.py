"""Each checker's own fields of a claim (``ClaimData``): what the web app
stores as a claim's data, read back into the same claim, and checked."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pipeline.checkers import checker_class, kinds
from pipeline.checkers.citations import citation_claims
from pipeline.checkers.consistency import block_claims
from pipeline.checkers.provenance.checker import item_claim
from pipeline.checkers.provenance.items import item_from_json
from pipeline.jsonl import claim_from_json
from pipeline.types import Claim, Document

BRIEF = Document(
    "brief",
    "As held in Marbury v. Madison, 5 U.S. 137, 177 (1803), the court "
    "decides. See id. at 178.",
)
RESPONSE = Document("answer", "Oslo is the capital. It has a fjord.")


def _claims() -> dict[str, list[Claim]]:
    """Claims of every packaged kind, as each makes them."""
    item = item_from_json(
        {
            "id": "q1",
            "query": "Where is the head office?",
            "answer": "In Oslo.",
            "contexts": [{"id": "wiki", "text": "The head office is in Oslo."}],
        }
    )
    return {
        "extraction": [
            claim_from_json(
                {
                    "id": "e1",
                    "document_id": "d1",
                    "type": "GPE",
                    "value": "Toronto",
                    "context": "in Toronto",
                }
            )
        ],
        "citations": citation_claims({"brief": BRIEF}),
        "provenance": [item_claim(item)],
        "consistency": block_claims({"answer": RESPONSE}),
    }


@pytest.mark.parametrize(
    "kind", ["extraction", "citations", "provenance", "consistency"]
)
def test_a_claim_comes_back_the_same_from_its_kinds_data(kind):
    spec = checker_class(kind).claim_data
    claims = _claims()[kind]
    assert claims
    for claim in claims:
        data = spec.of(claim)
        assert spec.problem(data) is None
        back = spec.claim(claim.id, claim.document_id, data)
        # The caller adds the model and the fields that are not the kind's.
        others = {k: v for k, v in claim.extra.items() if k not in data}
        assert replace(back, extra={**others, **back.extra}) == claim


def test_the_packaged_kinds_keep_what_each_claims_in_data():
    claims = _claims()
    data = {kind: checker_class(kind).claim_data.of(c[0]) for kind, c in claims.items()}
    assert data["citations"] == {
        "citation": "Marbury v. Madison, 5 U.S. 137, 177 (1803)",
        "start": 11,
        "end": 53,
        "form": "full",
    }
    assert data["provenance"] == {
        "answer": "In Oslo.",
        "query": "Where is the head office?",
    }
    assert data["consistency"] == {
        "sentence": "Oslo is the capital.",
        "block": 0,
        "start": 0,
        "end": 20,
    }
    assert checker_class("extraction").claim_data.statement(data["extraction"]) == (
        "GPE: Toronto"
    )


@pytest.mark.parametrize(
    "data, problem",
    [
        (["GPE"], "must be an object"),
        ({"type": "GPE", "value": "x"}, "lacks context"),
        (
            {"type": "GPE", "value": "x", "context": "", "page": 2},
            "has unknown fields page",
        ),
        ({"type": 7, "value": "x", "context": ""}, "field 'type' must be a string"),
        ({"type": "GPE", "value": None, "context": ""}, None),
    ],
)
def test_extraction_data_is_checked_field_by_field(data, problem):
    assert checker_class("extraction").claim_data.problem(data) == problem


def test_true_is_not_an_integer_offset():
    data = {"citation": "5 U.S. 137", "start": True, "end": 9, "form": "full"}
    assert checker_class("citations").claim_data.problem(data) == (
        "field 'start' must be an integer"
    )


@pytest.mark.parametrize(
    "kind, correction, problem",
    [
        ("extraction", {"type": "LOC", "value": {"city": "Ottawa"}}, None),
        ("extraction", {"type": "LOC"}, None),
        ("extraction", {}, "must be an object with some of value, type"),
        ("extraction", "Ottawa", "must be an object with some of value, type"),
        (
            "extraction",
            {"context": "in Ottawa"},
            "cannot correct context (what may be corrected: value, type)",
        ),
        ("extraction", {"type": 7}, "field 'type' must be a string"),
        ("consistency", {"sentence": "It snows."}, None),
        (
            "consistency",
            {"sentence": "It snows.", "block": 2},
            "cannot correct block (what may be corrected: sentence)",
        ),
        ("citations", {"citation": 5}, "field 'citation' must be a string"),
    ],
)
def test_a_correction_names_only_what_its_kind_lets_an_expert_correct(
    kind, correction, problem
):
    spec = checker_class(kind).claim_data
    assert spec.correction_problem(correction) == problem


def test_every_registered_checker_says_which_fields_are_its_own():
    for kind in kinds():
        spec = checker_class(kind).claim_data
        assert spec.fields and (spec.group is None or spec.group in spec.fields)
        assert spec.corrects and set(spec.corrects) <= set(spec.fields)

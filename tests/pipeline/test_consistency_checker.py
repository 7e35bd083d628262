"""The consistency checker behind the Checker protocol: an item's response is a
document, its sentences (blocks) the claims, each judged offline against the
samples stored with it."""

from __future__ import annotations

import pytest

from pipeline.checkers import checker_class, item_format
from pipeline.checkers.consistency import (
    ConsistencyChecker,
    item_document,
    item_from_document,
    item_from_json,
)
from pipeline.types import Document
from tests import consistency_data
from tests.scorers import WordOverlapScorer

# With a note on the sample whose variant failed, and a field of the item's
# own: both make the round trip.
LAMPORT = {
    **consistency_data.LAMPORT,
    "samples": [
        consistency_data.LAMPORT["samples"][0],
        {
            **consistency_data.LAMPORT["samples"][1],
            "note": "variant failed; the original prompt was sent",
        },
    ],
    "domain": "wk",
}
WATER = {
    "id": "water",
    "prompt": "What is the boiling point of water at sea level?",
    "response": "Water boils at 100 degrees Celsius at sea level. "
    "Pasta tastes better with salt.",
    "samples": ["At sea level water boils at 100 degrees Celsius."],
}
LONELY = {"id": "lonely", "prompt": "Say something.", "response": "The sky is blue."}


def _checker(*rows):
    documents = {}
    for row in rows:
        document = item_document(item_from_json(row))
        documents[document.id] = document
    return ConsistencyChecker(documents)


def _claims(checker):
    return checker.find_claims(checker.documents)


def test_an_item_is_a_document_and_back_exactly():
    item = item_from_json(LAMPORT)
    document = item_document(item)
    assert (document.id, document.text) == ("lamport", LAMPORT["response"])
    assert document.metadata == {
        "prompt": LAMPORT["prompt"],
        "samples": LAMPORT["samples"],
        "extra": {"domain": "wk"},
    }
    assert item_from_document(document) == item
    bare = item_from_json(LONELY)
    assert item_document(bare).metadata == {"prompt": "Say something.", "samples": []}
    assert item_from_document(item_document(bare)) == bare
    # A plain text uploaded to a consistency project: a response alone.
    plain = item_from_document(Document(id="t", text="Just text."))
    assert (plain.prompt, plain.response, plain.samples) == ("", "Just text.", ())


def test_the_kind_is_registered_and_reads_items():
    assert checker_class("consistency") is ConsistencyChecker
    form = item_format("consistency")
    assert form.document(form.read(LAMPORT)).id == "lamport"
    assert list(form.claims(form.read(LAMPORT))) == []  # found by the check
    assert item_format("provenance") is not None
    assert item_format("extraction") is None
    with pytest.raises(ValueError, match="field 'response'"):
        form.read({**LAMPORT, "response": ""})


def test_each_sentence_of_the_response_is_a_claim_with_its_offsets():
    checker = _checker(LAMPORT)
    claims = _claims(checker)
    assert [c.id for c in claims] == ["lamport#b0", "lamport#b1", "lamport#b2"]
    assert [c.value for c in claims] == [
        "Leslie Lamport is a computer scientist.",
        "Lamport received his PhD from Berkeley in 1972.",
        "He won the Turing Award in 2013.",
    ]
    for i, c in enumerate(claims):
        assert c.document_id == "lamport" and c.type == "response_block"
        assert c.extra["block"] == i
        assert LAMPORT["response"][c.extra["start"] : c.extra["end"]] == c.value


def test_a_contradicted_block_is_unsafe_with_the_contradicting_sentence_first():
    checker = _checker(LAMPORT)
    result = checker.check(_claims(checker), scorer=WordOverlapScorer())

    assert not result.errors
    first, phd, award = result.findings
    assert (first.verdict, first.reason, first.score) == ("safe", None, 1.0)
    assert (award.verdict, award.score) == ("safe", 1.0)
    assert (phd.claim_id, phd.hypothesis) == (
        "lamport#b1",
        "Lamport received his PhD from Berkeley in 1972.",
    )
    assert (phd.verdict, phd.reason) == ("unsafe", "contradicted")
    # One contradiction (weight 4) and one neutral sample (weight 1): 0.9.
    assert phd.score == pytest.approx(0.1)
    contradicting, neutral = phd.evidence
    sample_a = LAMPORT["samples"][0]["text"]
    assert (contradicting.source, contradicting.role, contradicting.score) == (
        "sample 1 (model-a)",
        "sample",
        None,
    )
    assert contradicting.text == "Lamport received his PhD from Brandeis in 1972."
    assert sample_a[contradicting.start : contradicting.end] == contradicting.text
    assert neutral.source == "sample 2 (model-b)"
    assert phd.premise == contradicting.text

    extra = phd.extra
    assert extra["block"] == 1
    response = LAMPORT["response"]
    assert (extra["start"], extra["end"]) == (40, 87)
    assert extra["before"] + phd.hypothesis + extra["after"] == response
    assert (extra["block_score"], extra["block_label"]) == (
        pytest.approx(0.9),
        "CONTRADICTION",
    )
    assert extra["deciding"] == 0
    assert [
        (j["sample"], j["model"], j["variant"], j["label"]) for j in extra["judgements"]
    ] == [
        (0, "model-a", "identity", "CONTRADICTION"),
        (1, "model-b", "rephrase", "NEUTRAL"),
    ]
    assert extra["judgements"][0]["evidence"] == contradicting.text
    assert extra["judgements"][0]["p"] == pytest.approx(7 / 8)
    # What a project hiding machine scores leaves out is named.
    assert {"block_score", "block_label", "p"} <= ConsistencyChecker.score_fields


def test_a_block_no_sample_speaks_of_is_unverified():
    checker = _checker(WATER)
    boils, pasta = checker.check(_claims(checker), scorer=WordOverlapScorer()).findings
    assert (boils.verdict, boils.reason, boils.score) == ("safe", None, 1.0)
    # Not confirmed unsafe: the paper counts only a contradiction.
    assert (pasta.verdict, pasta.reason, pasta.score) == ("unscored", "unverified", 0.5)
    assert pasta.extra["block_label"] == "NEUTRAL"
    assert ConsistencyChecker.reasons["unverified"]


def test_without_samples_or_a_scorer_a_block_is_unscored():
    checker = _checker(LAMPORT, LONELY)
    claims = _claims(checker)
    lonely = [c for c in claims if c.document_id == "lonely"]
    [finding] = checker.check(lonely, scorer=WordOverlapScorer()).findings
    assert (finding.verdict, finding.score, finding.evidence) == ("unscored", None, ())
    assert finding.extra["samples"] == 0 and finding.extra["note"]

    findings = checker.check(claims).findings
    assert {f.verdict for f in findings} == {"unscored"}
    phd = findings[1]
    # Not judged, but the expert still reads each sample's sentence most
    # about the block.
    assert [e.text for e in phd.evidence] == [
        "Lamport received his PhD from Brandeis in 1972.",
        "Leslie Lamport is a computer scientist known for Paxos.",
    ]
    assert {j["label"] for j in phd.extra["judgements"]} == {None}
    assert phd.extra["deciding"] is None


def test_a_claim_is_found_again_in_its_response_or_reported():
    checker = _checker(LAMPORT)
    phd = _claims(checker)[1]
    moved = checker.claim_from_json(
        {
            "id": "moved",
            "document_id": "lamport",
            "type": "response_block",
            "value": phd.value,
            "extra": {"start": 0, "end": 5},
        }
    )
    gone = checker.claim_from_json(
        {"id": "gone", "document_id": "lamport", "type": "x", "value": "No."}
    )
    orphan = checker.claim_from_json(
        {"id": "orphan", "document_id": "nowhere", "type": "x", "value": "No."}
    )
    result = checker.check([moved, gone, orphan], scorer=WordOverlapScorer())
    [finding] = result.findings
    assert (finding.claim_id, finding.extra["block"], finding.verdict) == (
        "moved",
        1,
        "unsafe",
    )
    assert [str(e).split(":")[0] for e in result.errors] == ["gone", "orphan"]
    assert "no longer has this block" in str(result.errors[0])


def test_labelled_blocks_give_the_deciding_sentence_and_the_block_as_pairs():
    checker = _checker(LAMPORT, LONELY)
    claims = _claims(checker)
    pairs = checker.training_pairs(claims, only={"lamport#b1", "lonely#b0"})
    # The answer without samples has nothing for the judge to read.
    [pair] = pairs
    assert (pair.claim_id, pair.document_id) == ("lamport#b1", "lamport")
    assert pair.premise == "Lamport received his PhD from Brandeis in 1972."
    assert pair.hypothesis == "Lamport received his PhD from Berkeley in 1972."
    assert len(checker.training_pairs(claims)) == 3


def test_silver_pairs_are_sample_sentences_and_their_swapped_twins():
    checker = _checker(LAMPORT, WATER)
    claims = _claims(checker)
    examples = checker.silver_examples(claims, seed=3)
    assert examples == checker.silver_examples(claims, seed=3)
    assert examples and len(examples) % 2 == 0
    samples = {s["text"] for s in LAMPORT["samples"]} | set(WATER["samples"])
    for positive, negative in zip(examples[::2], examples[1::2], strict=True):
        assert positive.premise == positive.hypothesis == negative.premise
        assert any(positive.premise in s for s in samples)
        assert (positive.supported, negative.supported) == (True, False)
        assert negative.hypothesis != negative.premise
        assert negative.source in ("silver:swapped", "silver:negated")
        assert positive.document_id == negative.document_id
    assert {e.document_id for e in examples} <= {"lamport", "water"}


def test_a_correction_kept_with_the_item_shows_while_its_block_holds():
    from dataclasses import replace

    from pipeline.checkers.consistency.checker import finding_block
    from pipeline.checkers.consistency.items import Correction

    item = item_from_json(LAMPORT)
    phd = "Lamport received his PhD from Berkeley in 1972."
    start = item.response.index(phd)
    fixed = Correction(start, start + len(phd), phd, "…from Brandeis…", "Brandeis")
    document = item_document(replace(item, corrections=(fixed,)))
    assert item_from_document(document).corrections == (fixed,)
    checker = ConsistencyChecker({document.id: document})
    findings = {
        f.hypothesis: f
        for f in checker.check(_claims(checker), scorer=WordOverlapScorer()).findings
    }
    assert findings[phd].extra["correction"] == "…from Brandeis…"
    assert findings[phd].extra["summary"] == "Brandeis"
    others = [f for claim, f in findings.items() if claim != phd]
    assert [f.extra["correction"] for f in others] == [None, None]
    # The block the finding describes, judgements included, to correct later.
    block = finding_block(phd, findings[phd].extra)
    assert (block.start, block.end, block.label) == (
        start,
        start + len(phd),
        "CONTRADICTION",
    )
    assert [j.label for j in block.judgements][0] == "CONTRADICTION"

    # The response changed under it: the correction no longer holds.
    moved = Document(document.id, "Intro. " + document.text, metadata=document.metadata)
    checker = ConsistencyChecker({moved.id: moved})
    result = checker.check(_claims(checker), scorer=WordOverlapScorer())
    assert all(f.extra["correction"] is None for f in result.findings)


@pytest.mark.parametrize(
    "corrections, message",
    [
        ({"start": 0}, "'corrections' must be a list"),
        ([{"start": "0", "end": 3, "text": "a", "correction": "b"}], "integers"),
        ([{"start": 0, "end": 3, "text": "a"}], "must be strings"),
    ],
)
def test_malformed_corrections_are_named(corrections, message):
    document = Document(
        "x", "A b.", metadata={"prompt": "p", "corrections": corrections}
    )
    with pytest.raises(ValueError, match=message):
        item_from_document(document)

"""Document-level consistency pairs: twins of one length, one error each,
and the passage really supports the supported half."""

from collections import Counter

from pipeline.checkers.passage_pairs import ERROR_KINDS, passage_pairs
from pipeline.checkers.perturb import entities

PASSAGES = [
    (
        "a",
        "Maria Lopez founded Harbor Freight Lines in Boston in 1987. She sold"
        " the company to Atlas Holdings in 2004 for 120 million dollars. The"
        " buyer moved its head office to Chicago, where it employs 900 people."
        " Lopez was not involved in the company after the sale was completed.",
    ),
    (
        "b",
        "The river flooded the valley in March 1962 after three days of rain."
        " Farmers in Greenfield lost most of their crops, and the county opened"
        " two shelters. He said the dam at Miller Creek held, but the levee"
        " along the north bank failed within hours of the first warning.",
    ),
    (
        "c",
        "John Carter sued the Westbrook Bank over a loan of 40,000 dollars. The"
        " Westbrook Bank had refused to extend the loan in June 2011, and"
        " Carter lost his farm near Springfield. The jury found for the bank"
        " after a trial of six days in the Hampshire County court.",
    ),
]


def test_pairs_come_in_twins_of_about_one_length():
    examples = passage_pairs(PASSAGES * 4, seed=0, per_passage=3)
    assert examples and len(examples) % 2 == 0
    for supported, unsupported in zip(examples[::2], examples[1::2], strict=True):
        assert supported.supported and not unsupported.supported
        assert supported.premise == unsupported.premise
        assert supported.document_id == unsupported.document_id
        assert supported.hypothesis != unsupported.hypothesis
        # Length says nothing: the twins differ by at most a few words.
        gap = abs(
            len(supported.hypothesis.split()) - len(unsupported.hypothesis.split())
        )
        assert gap <= 6, (supported.hypothesis, unsupported.hypothesis)


def test_each_error_kind_is_made_and_named():
    made = Counter(
        e.source.split(":")[1]
        for seed in range(6)
        for e in passage_pairs(PASSAGES, seed=seed, per_passage=4)
        if not e.supported
    )
    assert set(made) <= set(ERROR_KINDS)
    assert len(made) >= 6, made


def test_unsupported_names_are_absent_or_misplaced_and_supported_words_present():
    for e in passage_pairs(PASSAGES, seed=3, per_passage=4):
        premise = e.premise.lower()
        if e.supported:
            # Every name and number of a supported claim is in its premise.
            assert all(v.lower() in premise for _, v in entities(e.hypothesis)), e
        elif e.source.endswith("outside_entity"):
            assert any(v.lower() not in premise for _, v in entities(e.hypothesis))


def test_the_draw_is_repeatable_and_seeded():
    assert passage_pairs(PASSAGES, seed=1) == passage_pairs(PASSAGES, seed=1)
    draws = {tuple(passage_pairs(PASSAGES, seed=s)) for s in range(4)}
    assert len(draws) > 1
    assert passage_pairs([("x", "Too short."), ("y", "")], seed=0) == []

"""Context alignment: Table 2 mistranscriptions kept, hallucinations rejected,
offsets into the original text, and the windowed search agreeing with full
Biopython alignment."""

from __future__ import annotations

import random

import numpy as np
import pytest

from pipeline.align import (
    DEFAULT_THRESHOLD,
    DocumentIndex,
    align_context,
    align_full,
    is_aligned,
)
from pipeline.types import Alignment

PARTIES = ["appellant", "respondent", "claimant", "minister", "defendant", "board"]
CITIES = ["Toronto", "Montreal", "Vancouver", "Ottawa", "Calgary", "Winnipeg"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July"]
NAMES = ["Mr. Okafor", "Ms. Tremblay", "Dr. Singh", "Mrs. Novak", "Mr. Haddad"]
NOUNS = ["affidavit", "transcript", "exhibit", "record", "notice", "decision"]
VERBS = ["dismiss", "adjourn", "reopen", "stay", "quash", "amend"]
TEMPLATES = [
    "The {party} filed a motion to {verb} the proceeding on {date}.",
    "Counsel for the {party} argued that the member erred in reading the {noun}.",
    "The hearing was held on {date} before the Immigration Appeal Division in {city}.",
    "Pursuant to section {num} of the Act, the {party} must {verb} the {noun} "
    "within {days} days.",
    "{name} testified that the {noun} was received in {city} in {month} {year}.",
    "The panel finds the evidence of {name} credible and gives the {noun} "
    "little weight.",
    "For these reasons, the application is {outcome} and the {noun} is "
    "returned to the {party}.",
    "IAD File No. {file} / Date(s) of hearing: {date} / Place: {city}",
    "The {party} did not provide any {noun} to support the allegation made on {date}.",
]
OUTCOMES = ["allowed", "dismissed", "granted in part", "refused"]


def random_date(rng: random.Random) -> str:
    return f"{rng.choice(MONTHS)} {rng.randint(1, 28)}, {rng.randint(1995, 2011)}"


def sentence(rng: random.Random) -> str:
    return rng.choice(TEMPLATES).format(
        party=rng.choice(PARTIES),
        verb=rng.choice(VERBS),
        date=random_date(rng),
        noun=rng.choice(NOUNS),
        city=rng.choice(CITIES),
        num=rng.randint(12, 180),
        days=rng.choice([10, 15, 30, 60]),
        name=rng.choice(NAMES),
        month=rng.choice(MONTHS),
        year=rng.randint(1990, 2011),
        outcome=rng.choice(OUTCOMES),
        file=f"TA{rng.randint(10, 99)}-{rng.randint(10000, 99999)}",
    )


def make_document(rng: random.Random, size: int) -> str:
    parts: list[str] = []
    total = 0
    while total < size:
        paragraph = " ".join(sentence(rng) for _ in range(rng.randint(2, 6)))
        if rng.random() < 0.2:
            paragraph = f"[Page {len(parts) + 1}]\n{paragraph}"
        parts.append(paragraph)
        total += len(paragraph) + 2
    return "\n\n".join(parts)


def mistranscribe(text: str, rng: random.Random) -> str:
    words = text.split()
    kind = rng.choice(["case", "split", "insert", "elide", "swap", "space"])
    if kind == "case":
        return text.upper()
    if kind == "split":
        i = rng.randrange(1, len(text))
        return text[:i] + " " + text[i:]
    if kind == "insert" and len(words) > 2:
        i = rng.randrange(1, len(words))
        return " ".join([*words[:i], "l'audience", *words[i:]])
    if kind == "elide" and len(words) > 5:
        i = rng.randrange(1, len(words) - 2)
        return " ".join(words[:i] + words[i + 1 :])
    if kind == "swap" and len(text) > 3:
        i = rng.randrange(0, len(text) - 2)
        return text[:i] + text[i + 1] + text[i] + text[i + 2 :]
    return " ".join(words)


def both(document: str, context: str) -> tuple[Alignment, Alignment]:
    return align_context(document, context), align_full(document, context)


def same_answer(a: Alignment, b: Alignment) -> bool:
    return (a.start, a.end, a.score) == (b.start, b.end, b.score)


@pytest.fixture(scope="module")
def filler() -> str:
    return make_document(random.Random(11), 6_000)


# (context the LLM wrote, passage planted in the document) from Table 2.
TABLE_2 = [
    ("hearing june 19, 2013", "hearing l'audience june 19, 2013"),
    ("(in chambres)", "(in chamb ers)"),
    ("October 2007", "o ctober 2007"),
    (
        "date(s) de l'audience july 24, 2012",
        "date(s) de l'audience february 2, 2012 july 24, 2012",
    ),
    ("Refugee Protection Division", "REFUGEE PROTECTION DIVISION"),
]


@pytest.mark.parametrize(("context", "planted"), TABLE_2)
def test_table_2_mistranscription_is_kept_and_spans_the_planted_passage(
    filler: str, context: str, planted: str
):
    document = f"{filler[:3000]}\n{planted}\n{filler[3000:]}"
    for alignment in both(document, context):
        assert alignment.score >= DEFAULT_THRESHOLD
        assert alignment.text == planted
        assert alignment.start == document.index(planted)


@pytest.mark.parametrize(
    "context",
    [
        # an invented sentence
        "The tribunal ordered the deportation of the claimant's brother to Lagos.",
        # the right words in the wrong order
        "board the to returned is notice the and allowed is application the",
        # one date shared with the document, the rest invented
        "the claimant married her second husband in Lagos on June 19, 2013",
    ],
)
def test_hallucinated_context_is_rejected(filler: str, context: str):
    document = f"{filler}\nThe hearing was held on June 19, 2013 in Ottawa."
    for alignment in both(document, context):
        assert alignment.score < DEFAULT_THRESHOLD
        assert not is_aligned(alignment)


def test_one_shared_word_does_not_make_a_whole_invented_context_match(filler: str):
    document = f"{filler} The matter was adjourned sine die."
    context = "the respondent adjourned to celebrate with the whole family"
    for alignment in both(document, context):
        assert alignment.score < DEFAULT_THRESHOLD
    # the word alone is found exactly: the score is about the whole context
    assert align_context(document, "adjourned").score == 1.0


def test_offsets_index_the_original_text_after_non_ascii_characters():
    document = (
        "Décision rendue à Montréal 😀 par İLKNUR ŞAHİN, commissaire.\n"
        "\tLe\u00a0tribunal   conclut\n\nque la DEMANDE D'ASILE est rejetée. Fin."
    )
    context = "le tribunal conclut que la demande d'asile est rejetée"
    expected = "Le\u00a0tribunal   conclut\n\nque la DEMANDE D'ASILE est rejetée"
    for alignment in both(document, context):
        assert alignment.score == 1.0
        assert alignment.text == expected
        assert document[alignment.start : alignment.end] == alignment.text


def test_emoji_and_cjk_characters_are_compared_not_taken_for_spaces():
    document = "Exhibit 3: 東京地方裁判所 😀 ruling of 2009. Exhibit 4: 大阪 ruling."
    for alignment in both(document, "東京地方裁判所 😀 ruling"):
        assert alignment.score == 1.0
        assert alignment.text == "東京地方裁判所 😀 ruling"
    for alignment in both(document, "東京 ruling"):
        assert alignment.score < 1.0


def test_a_character_that_lower_cases_to_two_keeps_offsets_right():
    document = "Témoin: İLKNUR ŞAHİN 😀 — İstanbul, le 3 mai 2010."
    for context, expected in [
        ("İlknur Şahin", "İLKNUR ŞAHİN"),
        ("istanbul, le 3 mai 2010", "İstanbul, le 3 mai 2010"),
    ]:
        for alignment in both(document, context):
            assert alignment.text == expected
            assert document[alignment.start : alignment.end] == expected
            assert alignment.score >= DEFAULT_THRESHOLD


def test_whitespace_runs_and_newlines_in_the_context_are_collapsed(filler: str):
    document = f"{filler} Date(s) of hearing: July 24, 2012 / Place: Ottawa"
    context = "  date(s)\nof\t\thearing:\u00a0 july 24,\n2012 "
    for alignment in both(document, context):
        assert alignment.score == 1.0
        assert alignment.text == "Date(s) of hearing: July 24, 2012"


@pytest.mark.parametrize("context", ["", "   ", "\n\t\u00a0"])
def test_empty_or_blank_context_aligns_to_nothing(filler: str, context: str):
    for alignment in both(filler, context):
        assert alignment == Alignment(0.0, None, None, "")


def test_index_built_for_another_document_is_refused(filler: str):
    with pytest.raises(ValueError, match="another document"):
        align_context(filler, "the hearing", index=DocumentIndex("other text"))


def test_is_aligned_keeps_scores_from_the_paper_threshold():
    assert DEFAULT_THRESHOLD == 0.6
    assert is_aligned(Alignment(0.6, 0, 1, "x"))
    assert not is_aligned(Alignment(0.59, 0, 1, "x"))
    assert is_aligned(Alignment(0.5, 0, 1, "x"), threshold=0.5)


def test_duplicated_passage_resolves_to_the_occurrence_biopython_picks():
    rng = random.Random(5)
    passage = "The panel finds the evidence of Dr. Singh credible and gives weight."
    document = "\n\n".join(
        [make_document(rng, 2_000), passage, make_document(rng, 3_000), passage, "."]
    )
    index = DocumentIndex(document)
    for context in [passage, passage.upper(), passage.replace("Singh", "Sing h")]:
        fast = align_context(document, context, index=index)
        full = align_full(document, context)
        assert same_answer(fast, full)
        assert fast.start == document.rindex(passage)


@pytest.mark.parametrize("seed", range(8))
def test_windowed_alignment_equals_full_alignment(seed: int):
    rng = random.Random(seed)
    size = 50_000 if seed == 0 else rng.choice([5_000, 10_000, 20_000])
    document = make_document(rng, size)
    if seed % 2:  # a duplicated passage, as boilerplate repeats
        at = rng.randrange(0, len(document) - 400)
        document += "\n\n" + document[at : at + 400]
    index = DocumentIndex(document)
    differ = []
    for _ in range(8 if size > 20_000 else 40):
        length = rng.randint(10, 250)
        at = rng.randrange(0, len(document) - length)
        context = document[at : at + length]
        for _ in range(rng.randint(0, 2)):
            context = mistranscribe(context, rng)
        fast = align_context(document, context, index=index)
        full = align_full(document, context)
        assert fast.text == document[fast.start : fast.end]
        if not same_answer(fast, full):
            differ.append((context, fast, full))
    assert differ == []


@pytest.mark.parametrize("seed", range(3))
def test_hallucinated_contexts_stay_below_threshold_in_both_searches(seed: int):
    rng = random.Random(100 + seed)
    document = make_document(rng, 10_000)
    invented_words = (
        "the tribunal ordered immediate deportation after reviewing medical "
        "reports from Lagos although nobody attended and costs were awarded "
        "against everyone concerned with the brother's visa"
    ).split()
    index = DocumentIndex(document)
    for _ in range(15):
        words = rng.sample(invented_words, rng.randint(5, 15))
        context = " ".join(words)
        if rng.random() < 0.5:  # share one real date with the document
            context += " on " + rng.choice(document.split(" on ")[1:])[:14]
        fast = align_context(document, context, index=index)
        full = align_full(document, context)
        assert fast.score < DEFAULT_THRESHOLD
        assert full.score < DEFAULT_THRESHOLD


@pytest.mark.parametrize("k", [4, 8])
def test_the_index_seeds_a_kmer_exactly_where_the_document_holds_it(k):
    """Every context k-mer's seeds are the document offsets holding it, no
    more and no fewer: the keys keep a hash's high bits, so k-mers differing
    only in their last character (which a rolling hash puts in its low bits)
    must not share seeds."""
    rng = random.Random(k)
    document = " ".join(sentence(rng) for _ in range(60)).lower()
    document += " abcdefgh abcdefgi abcdefgj abcd abce abcf"
    context = "the hearing was held on abcdefgi and abce"
    index = DocumentIndex(document)
    doc_pos, ctx_pos, _ = index._seeds(
        np.frombuffer(context.encode("utf-32-le"), dtype="<u4"), k, max_occurrences=None
    )
    found = sorted(zip(ctx_pos.tolist(), doc_pos.tolist(), strict=True))
    expected = sorted(
        (q, d)
        for q in range(len(context) - k + 1)
        for d in range(len(document) - k + 1)
        if document[d : d + k] == context[q : q + k]
    )
    assert found == expected

"""Sentence spans, shared by provenance (contexts, answers) and consistency
(answer blocks, samples)."""

from concurrent.futures import ThreadPoolExecutor

import pytest

from pipeline.checkers import sentences
from pipeline.checkers.sentences import sentence_spans


def test_sentences_split_where_scraped_text_glued_them_and_keep_offsets():
    text = "It was founded in the 19th century.First for Women is a magazine."
    spans = sentence_spans(text)
    assert [text[a:b] for a, b in spans] == [
        "It was founded in the 19th century.",
        "First for Women is a magazine.",
    ]
    assert sentence_spans("Dr. Smith met the U.S.Army chief.") == [(0, 33)]
    assert sentence_spans("   ") == []


def test_texts_split_in_threads_get_their_own_offsets():
    texts = [
        f"Item {i} opened in {1900 + i}. " * (1 + i % 4) + f"It closed in {2000 + i}."
        for i in range(60)
    ]
    alone = [sentence_spans(t) for t in texts]
    with ThreadPoolExecutor(max_workers=8) as pool:
        together = list(pool.map(sentence_spans, texts))
    assert together == alone


PARTS = [
    "Dr. Smith met the U.S. Army chief.",
    "It was founded in the 19th century.First for Women is a magazine.",
    'He said "Go now!" and left.',
    "Is it 3.5 km? Yes.",
    "Mr. and Mrs. Jones arrived at 5 p.m. on Monday.",
    "The e.g. case is odd; see p. 4 of the report.",
]


def _long_paragraph(chars: int) -> str:
    out, i = [], 0
    while sum(map(len, out)) < chars:
        out.append(PARTS[(i * 7) % len(PARTS)])
        i += 1
    return " ".join(out)


@pytest.fixture
def segmented(monkeypatch):
    """The length of every text pysbd is given."""
    import pysbd

    lengths = []
    segment = pysbd.Segmenter.segment

    def spy(self, text):
        lengths.append(len(text))
        return segment(self, text)

    monkeypatch.setattr(pysbd.Segmenter, "segment", spy)
    return lengths


def test_a_long_paragraph_is_split_a_window_at_a_time_with_pysbds_offsets(
    segmented, monkeypatch
):
    """pysbd is quadratic in the text it is given (64 KB of one paragraph
    took 4 s): a long paragraph goes to it in bounded windows, each
    character about once, and the sentences are those it finds in the
    whole paragraph."""
    text = _long_paragraph(40_000)
    windowed = sentence_spans(text)
    assert segmented and max(segmented) <= sentences.WINDOW_CHARS
    assert sum(segmented) < 1.5 * len(text)
    monkeypatch.setattr(sentences, "WINDOW_CHARS", 10**9)
    segmented.clear()
    whole = sentence_spans(text)
    assert segmented == [len(text)]
    assert windowed == whole
    assert len(whole) > 1000
    assert all(text[a:b] == text[a:b].strip() and b > a for a, b in whole)


def test_a_sentence_longer_than_a_window_is_cut_at_spaces(segmented):
    text = " ".join(f"word{i}" for i in range(3000))  # no full stop in 26 KB
    spans = sentence_spans(text)
    assert len(spans) > 1
    assert all(b - a <= sentences.WINDOW_CHARS for a, b in spans)
    assert " ".join(text[a:b] for a, b in spans) == text
    assert max(segmented) <= sentences.WINDOW_CHARS

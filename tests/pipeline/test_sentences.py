"""Sentence spans, shared by provenance (contexts, answers) and consistency
(answer blocks, samples)."""

from concurrent.futures import ThreadPoolExecutor

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

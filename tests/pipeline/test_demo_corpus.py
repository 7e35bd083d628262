import re
import time
from collections import Counter, defaultdict

import pytest

from pipeline import demo_corpus
from pipeline.demo_corpus import (
    DEFAULT_TYPES,
    HELD_OUT_STYLES,
    MODELS,
    SAFE_KINDS,
    STYLES,
    TRIBUNAL_TYPES,
    UNSAFE_KINDS,
    demo_schema,
    generate_corpus,
    tribunal_schema,
    write_corpus,
)
from pipeline.hypothesis import render_hypothesis
from pipeline.jsonl import prediction_from_json, read_jsonl
from pipeline.schema import schema_from_dict


@pytest.fixture(scope="module")
def corpus():
    return generate_corpus(docs=500, seed=7)


@pytest.fixture(scope="module")
def tribunal():
    return generate_corpus(docs=100, seed=7, styles=["tribunal"])


def _documents(corpus):
    return {d.id: d for d in corpus.documents}


def _squash(text):
    return " ".join(text.split())


def _in_two_pieces(context, text):
    """Whether context is two pieces of text, in order, joined by one space."""
    for i, ch in enumerate(context):
        if ch != " ":
            continue
        left = text.find(context[:i])
        if left >= 0 and text.find(context[i + 1 :], left + i) >= 0:
            return True
    return False


def _translated_back(context, text):
    pairs = {**demo_corpus._TRANSLATIONS, **demo_corpus._BACK_TRANSLATIONS}
    for t in re.finditer(r"[^\W\d_]+", context):
        other = pairs.get(t.group().lower())
        if other is None:
            continue
        for shown in (other, other.capitalize(), other.upper()):
            if context[: t.start()] + shown + context[t.end() :] in text:
                return True
    return False


_PRESENT = {
    "exact": lambda c, t: c in t,
    "case": lambda c, t: c not in t and c.lower() in t.lower(),
    "ocr_split": lambda c, t: (
        c not in t and re.sub(r"\s", "", c) in re.sub(r"\s", "", t)
    ),
    "inserted_tokens": lambda c, t: c not in t and _in_two_pieces(c, t),
    "elided_tokens": lambda c, t: c not in t and _in_two_pieces(c, t),
    "translation": lambda c, t: c not in t and _translated_back(c, t),
    "whitespace": lambda c, t: c not in t and c in _squash(t),
}


def test_same_seed_gives_byte_identical_files(tmp_path):
    first = write_corpus(generate_corpus(docs=40, seed=3), tmp_path / "a")
    second = write_corpus(generate_corpus(docs=40, seed=3), tmp_path / "b")
    other = write_corpus(generate_corpus(docs=40, seed=4), tmp_path / "c")
    for name in ("documents", "predictions", "labels", "schema"):
        assert first[name].read_bytes() == second[name].read_bytes()
    assert first["documents"].read_bytes() != other["documents"].read_bytes()
    assert first["predictions"].read_bytes() != other["predictions"].read_bytes()


def test_written_predictions_read_back_with_their_kind(tmp_path):
    corpus = generate_corpus(docs=10, seed=1)
    paths = write_corpus(corpus, tmp_path)
    report = read_jsonl(paths["predictions"], prediction_from_json)
    assert not report.errors
    assert report.records == corpus.predictions
    assert all("kind" in p.extra for p in report.records)


def test_a_larger_corpus_extends_a_smaller_one():
    small, large = generate_corpus(docs=10, seed=5), generate_corpus(docs=20, seed=5)
    assert large.documents[:10] == small.documents
    assert large.predictions[: len(small.predictions)] == small.predictions


def test_labels_predictions_and_documents_refer_to_each_other(corpus):
    documents = _documents(corpus)
    predictions = {p.id: p for p in corpus.predictions}
    assert len(documents) == len(corpus.documents)
    assert len(predictions) == len(corpus.predictions) == len(corpus.labels)
    assert all(p.document_id in documents for p in corpus.predictions)
    assert {label.prediction_id for label in corpus.labels} == set(predictions)
    for label in corpus.labels:
        kind = predictions[label.prediction_id].extra["kind"]
        assert label.extra["kind"] == kind
        assert label.label == ("unsafe" if kind in UNSAFE_KINDS else "safe")


def test_documents_look_like_decisions_of_several_styles(corpus):
    lengths = [len(d.text) for d in corpus.documents]
    assert 300 <= min(lengths) and max(lengths) <= 5000
    assert {d.metadata["style"] for d in corpus.documents} == set(STYLES)
    assert {d.metadata["model"] for d in corpus.documents} == set(MODELS)
    text = "\n".join(d.text for d in corpus.documents)
    for phrase in ("Date(s) de l'audience", "REASONS", "File No.", "Refugee"):
        assert phrase in text
    assert re.search(r"\b\d{4}-\d{2}-\d{2}\b", text)  # 2012-01-17
    assert re.search(r"\b\d{2}/\d{2}/\d{4}\b", text)  # 17/01/2012
    assert re.search(r"\b[A-Z][a-z]+ \d{1,2}, \d{4}\b", text)  # January 17, 2012
    assert re.search(r"\b\d{1,2} [A-Z][a-z]+ \d{4}\b", text)  # 17 January 2012
    assert re.search(r"\ble \d{1,2}(er)? [a-zéû]+ \d{4}\b", text)  # le 17 janvier


def test_about_ten_predictions_per_document_covering_every_type(corpus):
    per_doc = Counter(p.document_id for p in corpus.predictions)
    assert 8 <= sum(per_doc.values()) / len(corpus.documents) <= 12
    assert max(per_doc.values()) <= 12
    assert {p.type for p in corpus.predictions} == set(DEFAULT_TYPES)
    by_doc = defaultdict(set)
    for p in corpus.predictions:
        by_doc[p.document_id].add(p.type)
    assert sum(types == set(DEFAULT_TYPES) for types in by_doc.values()) > 0.9 * len(
        by_doc
    )


@pytest.mark.parametrize("kind", SAFE_KINDS)
def test_safe_contexts_are_in_the_document_up_to_their_mistranscription(corpus, kind):
    documents = _documents(corpus)
    chosen = [p for p in corpus.predictions if p.extra["kind"] == kind]
    assert len(chosen) >= 10
    for p in chosen:
        text = documents[p.document_id].text
        assert _PRESENT[kind](p.context, text), (kind, p.context)
        assert 10 <= len(p.context) <= 130


def test_unsafe_contexts_are_invented_or_real_as_their_kind_says(corpus):
    documents = _documents(corpus)
    for p in corpus.predictions:
        text = documents[p.document_id].text
        kind = p.extra["kind"]
        if kind == "hallucinated_context":
            assert p.context.lower() not in text.lower()
        elif kind in UNSAFE_KINDS and "mistranscription" not in p.extra:
            assert p.context in text


def test_unsafe_share_and_kinds_are_in_the_designed_band(corpus):
    kinds = Counter(p.extra["kind"] for p in corpus.predictions)
    unsafe = sum(kinds[k] for k in UNSAFE_KINDS) / len(corpus.predictions)
    assert 0.15 <= unsafe <= 0.25
    assert all(kinds[k] >= 20 for k in UNSAFE_KINDS)
    assert set(kinds) == set(SAFE_KINDS) | set(UNSAFE_KINDS)


def test_model_error_rates_are_ordered_as_designed(corpus):
    unsafe, mistranscribed, total = Counter(), Counter(), Counter()
    for p in corpus.predictions:
        total[p.model] += 1
        unsafe[p.model] += p.extra["kind"] in UNSAFE_KINDS
        mistranscribed[p.model] += p.extra["kind"] in SAFE_KINDS[1:]
    rate = {m: unsafe[m] / total[m] for m in MODELS}
    for model, profile in MODELS.items():
        assert rate[model] == pytest.approx(profile.unsafe_rate, abs=0.05)
    by_design = sorted(MODELS, key=lambda m: MODELS[m].unsafe_rate)
    assert sorted(MODELS, key=rate.get) == by_design
    assert by_design[0] == "o4-mini" and by_design[-1] == "llama-4-scout"
    safe_rate = {m: mistranscribed[m] / (total[m] - unsafe[m]) for m in MODELS}
    assert safe_rate["llama-4-scout"] == pytest.approx(0.42, abs=0.06)
    assert safe_rate["o4-mini"] < 0.1


def test_held_out_style_appears_only_when_asked(corpus, tribunal):
    assert HELD_OUT_STYLES == ("tribunal",)
    assert all(d.metadata["style"] != "tribunal" for d in corpus.documents)
    assert all(d.metadata["style"] == "tribunal" for d in tribunal.documents)
    assert {p.type for p in tribunal.predictions} == set(TRIBUNAL_TYPES)
    assert tribunal.schema == tribunal_schema()
    assert corpus.schema == demo_schema()
    mixed = generate_corpus(docs=30, seed=0, styles=["tabular", "tribunal"])
    assert set(schema_from_dict(mixed.schema).entity_types) == set(
        DEFAULT_TYPES + TRIBUNAL_TYPES
    )
    with pytest.raises(ValueError):
        generate_corpus(docs=1, styles=["sonnet"])


@pytest.mark.parametrize("which", ["corpus", "tribunal"])
def test_values_render_to_sensible_hypotheses(request, which):
    corpus = request.getfixturevalue(which)
    schema = schema_from_dict(corpus.schema)
    for p in corpus.predictions:
        spec = schema.get(p.type)
        assert spec is not None, p.type
        hypothesis = render_hypothesis(p.type, p.value, schema=schema)
        shown = hypothesis.split(": ", 1)[1]
        if spec.render == "date":
            assert re.fullmatch(r"\d{4}-\d{2}(-\d{2})?", shown), hypothesis
        elif spec.render == "name":
            assert len(shown.split()) >= 2, hypothesis
        elif spec.enum:
            assert p.value in spec.enum, hypothesis
        else:
            assert isinstance(p.value, str) and shown, hypothesis
    assert render_hypothesis(
        "HearingDate", {"yyyy": "2012", "mm": "01", "dd": "17"}, schema=schema
    ) == ("Hearing Date: 2012-01-17")


def test_alignment_keeps_safe_contexts_and_rejects_invented_ones(corpus):
    align = pytest.importorskip("pipeline.align")
    documents = _documents(corpus)
    indexes = {}
    kept, totals = Counter(), Counter()
    for p in corpus.predictions:
        kind = p.extra["kind"]
        if kind not in SAFE_KINDS and kind != "hallucinated_context":
            continue
        text = documents[p.document_id].text
        index = indexes.setdefault(p.document_id, align.DocumentIndex(text))
        score = align.align_context(text, p.context, index=index).score
        group = "safe" if kind in SAFE_KINDS else kind
        totals[group] += 1
        kept[group] += score >= align.DEFAULT_THRESHOLD
    assert kept["safe"] / totals["safe"] >= 0.99
    assert kept["hallucinated_context"] / totals["hallucinated_context"] <= 0.05


def test_a_thousand_documents_generate_in_seconds():
    started = time.perf_counter()
    generated = generate_corpus(docs=1000, seed=11)
    assert len(generated.documents) == 1000
    assert time.perf_counter() - started < 8

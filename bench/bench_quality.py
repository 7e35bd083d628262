"""The quality run: demo corpus, 500 human labels, train, check held-out docs.

Reproduces the paper's Table 1 task on the demo corpus: flag unsafe
claims on documents no training step saw. Prints one JSON object per
evaluated scorer, with precision / recall / F1, and the same on documents of
a style the training never saw (``tribunal``).

It also times the check end to end (align, score, judge: claims a second,
best of two runs over the held-out and unseen-style claims, all distinct) of
the trained scorer in fp32, the baseline, and in the precisions the CPU
offers: the default (bf16 where the CPU computes it natively, else fp32)
and int8, each with its F1 and its speed as a ratio to fp32's in this run.

    python bench/bench_quality.py [--docs 600] [--labels 500] [--stages silver,human]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.checkers.extraction import ExtractionChecker  # noqa: E402
from pipeline.checkers.extraction.check import check_claims  # noqa: E402
from pipeline.evaluate import evaluate_checked  # noqa: E402
from pipeline.score import NLIScorer  # noqa: E402
from pipeline.train import TrainConfig, train_scorer  # noqa: E402
from tools.demo_corpus import generate_corpus  # noqa: E402


def split_corpus(corpus, *, test_share: float, n_labels: int, seed: int):
    """Held-out test documents; human labels on whole documents of the rest."""
    doc_ids = [d.id for d in corpus.documents]
    random.Random(seed).shuffle(doc_ids)
    n_test = round(len(doc_ids) * test_share)
    test_docs, train_docs = set(doc_ids[:n_test]), doc_ids[n_test:]
    by_doc: dict[str, list[str]] = {}
    for p in corpus.claims:
        by_doc.setdefault(p.document_id, []).append(p.id)
    labelled: set[str] = set()
    for doc in train_docs:
        if len(labelled) >= n_labels:
            break
        labelled.update(by_doc.get(doc, [])[: n_labels - len(labelled)])
    gold = {lab.claim_id: lab for lab in corpus.labels}
    return test_docs, {pid: gold[pid] for pid in labelled}, gold


def evaluate_on(scorer, corpus, doc_ids, gold) -> dict:
    documents, claims, _ = _measured(corpus, doc_ids, gold)
    report = check_claims(documents, claims, scorer=scorer)
    result = evaluate_checked(report.checked, gold)
    return {k: result[k] for k in ("n", "precision", "recall", "f1", "confusion")}


def _measured(corpus, doc_ids, gold) -> tuple[dict, list, dict]:
    """(documents, claims, gold labels) of these documents of ``corpus``."""
    documents = {d.id: d for d in corpus.documents if d.id in doc_ids}
    return documents, [p for p in corpus.claims if p.document_id in doc_ids], gold


def check_speed(folder: str, measured: dict, device: str | None) -> dict:
    """F1 and end-to-end claims a second of the scorer in ``folder`` in each
    precision, fp32 first (the baseline of the ratios).

    Args:
        measured: (documents, claims, gold labels) by the name of each set.
    """
    precisions = {"fp32": dict(bf16=False), "default": {}, "int8": dict(quantize=True)}
    claims = sum(len(c) for _, c, _ in measured.values())
    distinct = len(
        {
            (p.document_id, p.type, json.dumps(p.value, sort_keys=True), p.context)
            for _, items, _ in measured.values()
            for p in items
        }
    )
    rows: dict[str, dict] = {}
    for name, options in precisions.items():
        if device not in (None, "cpu") and name != "default":
            continue  # the other precisions are the CPU's
        scorer = NLIScorer(folder, device=device, **options)
        runs = []
        for _ in range(2):
            started = time.perf_counter()
            reports = {
                where: check_claims(documents, items, scorer=scorer)
                for where, (documents, items, _) in measured.items()
            }
            runs.append(time.perf_counter() - started)
        rows[name] = {
            f"{where}_f1": evaluate_checked(reports[where].checked, gold)["f1"]
            for where, (_, _, gold) in measured.items()
        }
        rows[name]["claims_per_second"] = round(claims / min(runs), 1)
        if name == "default":
            rows[name]["computes_in"] = "bf16" if scorer.bf16 else "fp32"
    for row in rows.values():
        if "fp32" in rows:
            row["x_fp32"] = round(
                row["claims_per_second"] / rows["fp32"]["claims_per_second"], 2
            )
    return {"claims": claims, "distinct": distinct, "precisions": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=600)
    parser.add_argument("--labels", type=int, default=500)
    parser.add_argument("--stages", default="silver,human")
    parser.add_argument("--silver-limit", type=int, default=6000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device")
    parser.add_argument("--out", help="keep the trained scorer in this folder")
    args = parser.parse_args()

    corpus = generate_corpus(docs=args.docs, seed=args.seed)
    test_docs, labels, gold = split_corpus(
        corpus, test_share=0.2, n_labels=args.labels, seed=args.seed
    )
    # Held-out documents give training nothing, pattern pairs included: the
    # checker that makes silver pairs never sees them.
    documents = {d.id: d for d in corpus.documents if d.id not in test_docs}
    train_claims = [p for p in corpus.claims if p.document_id not in test_docs]
    unseen = generate_corpus(docs=80, seed=args.seed + 1, styles=["tribunal"])
    unseen_gold = {lab.claim_id: lab for lab in unseen.labels}
    unseen_docs = {d.id for d in unseen.documents}

    base = NLIScorer()
    rows = {
        "untuned base": {
            "held_out": evaluate_on(base, corpus, test_docs, gold),
            "unseen_style": evaluate_on(base, unseen, unseen_docs, unseen_gold),
        }
    }
    config = TrainConfig(
        stages=tuple(args.stages.split(",")),
        silver_limit=args.silver_limit,
        device=args.device,
        seed=args.seed,
    )
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or tmp
        metadata = train_scorer(
            ExtractionChecker(documents), train_claims, labels, out, config=config
        )
        trained = NLIScorer(out, device=args.device)
        rows[f"trained ({args.stages})"] = {
            "held_out": evaluate_on(trained, corpus, test_docs, gold),
            "unseen_style": evaluate_on(trained, unseen, unseen_docs, unseen_gold),
            "threshold": round(metadata["threshold"], 4),
            "label_counts": metadata["label_counts"],
            "train_seconds": round(time.monotonic() - started, 1),
        }
        speed = check_speed(
            out,
            {
                "held_out": _measured(corpus, test_docs, gold),
                "unseen_style": _measured(unseen, unseen_docs, unseen_gold),
            },
            args.device,
        )
    print(
        json.dumps(
            {
                "corpus_docs": args.docs,
                "held_out_docs": len(test_docs),
                "human_labels": len(labels),
                "scorers": rows,
                "check_speed": speed,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()

"""Calibration and the operating point on held-out gold labels.

A scorer is trained on expert labels of part of the demo corpus (expert stage
only, a few epochs: minutes on a CPU; ``--base`` scores with the untrained
packaged encoder instead). The other documents play the gold set: they are
split in two halves by document. On the first half the calibration is fitted
(isotonic and temperature, as ``annotator.training.calibration`` does) and the
threshold for a target recall of unsafe is chosen, aiming above the target
as the app does (``confident_recall``: 95% sure to reach it on new claims);
on the second, never seen by either, are measured:

    ECE of the raw score and of the calibrated one, and their ratio
        (done when calibrated <= raw / 2);
    the recall, precision and expert workload of the chosen threshold
        (done when recall >= the target).

As in the app, claims the aligner rejects have no score: they are left
out of the calibration and of recall and precision (the scorer's share), and
counted in the workload (they are flagged whatever the threshold).

    python bench/bench_calibration.py [--docs 400] [--labels 300] [--target 0.95]
        [--epochs 3] [--seed 0] [--base]
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

from pipeline.calibration import (  # noqa: E402
    confident_recall,
    expected_calibration_error,
    fit_calibration,
    operating_point,
)
from pipeline.checkers.extraction import ExtractionChecker  # noqa: E402
from pipeline.checkers.extraction.check import check_claims  # noqa: E402
from pipeline.score import NLIScorer  # noqa: E402
from pipeline.train import TrainConfig, train_scorer  # noqa: E402
from tools.demo_corpus import generate_corpus  # noqa: E402


def split_documents(corpus, *, train_share: float, seed: int):
    """Training documents, and the gold-like rest in two halves (fit, test)."""
    doc_ids = [d.id for d in corpus.documents]
    random.Random(seed).shuffle(doc_ids)
    n_train = round(len(doc_ids) * train_share)
    rest = doc_ids[n_train:]
    return set(doc_ids[:n_train]), set(rest[::2]), set(rest[1::2])


def gold_rows(corpus, scorer, doc_ids, labels):
    """(score or None, unsafe, type) of each claim of ``doc_ids``."""
    documents = {d.id: d for d in corpus.documents if d.id in doc_ids}
    claims = [p for p in corpus.claims if p.document_id in doc_ids]
    report = check_claims(documents, claims, scorer=scorer)
    return [
        (c.score, labels[c.claim.id].label == "unsafe", c.claim.type)
        for c in report.checked
    ]


def measure(
    fit_rows, test_rows, *, target: float, method: str, confidence: float
) -> dict:
    def scored(rows):
        kept = [r for r in rows if r[0] is not None]
        return (
            [min(1.0, max(0.0, r[0])) for r in kept],
            [not r[1] for r in kept],
            [r[2] for r in kept],
        )

    fit_scores, fit_safe, fit_types = scored(fit_rows)
    scores, safe, types = scored(test_rows)
    calibration = fit_calibration(fit_scores, fit_safe, fit_types, method=method)
    raw = expected_calibration_error(scores, safe)
    calibrated = expected_calibration_error(calibration.apply(scores, types), safe)
    # Chosen on the fit half only, on the raw score (the calibration is
    # monotone: the same flags), then measured on the test half.
    # Aimed above the target as the app does, so that new claims reach it
    # with ``confidence``; the plain target is shown beside it.
    fit_unsafe = [not s for s in fit_safe]
    aimed = confident_recall(target, sum(fit_unsafe), confidence=confidence)
    chosen = operating_point(fit_scores, fit_unsafe, target_recall=aimed)
    flagged = [s < chosen.threshold for s in scores]
    unsafe = [not s for s in safe]
    hits = sum(f and u for f, u in zip(flagged, unsafe, strict=True))
    unaligned_unsafe = sum(1 for r in test_rows if r[0] is None)
    workload = sum(flagged) + unaligned_unsafe
    plain = operating_point(fit_scores, fit_unsafe, target_recall=target)
    plain_hits = sum(
        s < plain.threshold and u for s, u in zip(scores, unsafe, strict=True)
    )
    return {
        "method": method,
        "per_type": sorted(calibration.by_type),
        "fit_half": {"scored": len(fit_scores), "unsafe": sum(not s for s in fit_safe)},
        "test_half": {"scored": len(scores), "unsafe": sum(unsafe)},
        "ece_raw": round(raw, 4),
        "ece_calibrated": round(calibrated, 4),
        "ece_ratio": round(calibrated / raw, 3) if raw else None,
        "ece_halved": calibrated <= raw / 2,
        "operating_point": {
            "target_recall": target,
            "confidence": confidence,
            "fit_half_recall_aimed": round(aimed, 4),
            "threshold": round(chosen.threshold, 4),
            "fit_half_recall": round(chosen.recall, 4),
            "test_half_recall": round(hits / sum(unsafe), 4),
            "test_half_precision": round(hits / sum(flagged), 4)
            if any(flagged)
            else None,
            "test_half_workload": f"{workload} of {len(test_rows)} claims "
            f"({workload / len(test_rows):.1%}), {unaligned_unsafe} not aligned",
            "target_met": hits / sum(unsafe) >= target,
        },
        "at_the_plain_target": {
            "threshold": round(plain.threshold, 4),
            "test_half_recall": round(plain_hits / sum(unsafe), 4),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=400)
    parser.add_argument("--labels", type=int, default=300)
    parser.add_argument("--train-share", type=float, default=0.3)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--target", type=float, default=0.95)
    parser.add_argument(
        "--confidence", type=float, default=0.95, help="0.5: aim at the target"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", help="cpu, cuda...; default: CUDA when present")
    parser.add_argument(
        "--base", action="store_true", help="score with the untrained packaged model"
    )
    args = parser.parse_args()

    started = time.monotonic()
    corpus = generate_corpus(docs=args.docs, seed=args.seed)
    labels = {lab.claim_id: lab for lab in corpus.labels}
    train_docs, fit_docs, test_docs = split_documents(
        corpus, train_share=args.train_share, seed=args.seed
    )
    with tempfile.TemporaryDirectory() as tmp:
        if args.base:
            scorer, trained = NLIScorer(device=args.device), "untrained packaged base"
        else:
            train_claims = [p for p in corpus.claims if p.document_id in train_docs]
            expert = {p.id: labels[p.id] for p in train_claims[: args.labels]}
            documents = {d.id: d for d in corpus.documents if d.id in train_docs}
            train_scorer(
                ExtractionChecker(documents),
                train_claims,
                expert,
                tmp,
                config=TrainConfig(
                    stages=("human",),
                    human_epochs=args.epochs,
                    device=args.device,
                    seed=args.seed,
                ),
            )
            scorer = NLIScorer(tmp, device=args.device)
            trained = f"expert stage on {len(expert)} labels, {args.epochs} epochs"
        fit_rows = gold_rows(corpus, scorer, fit_docs, labels)
        test_rows = gold_rows(corpus, scorer, test_docs, labels)
    results = [
        measure(
            fit_rows,
            test_rows,
            target=args.target,
            method=method,
            confidence=args.confidence,
        )
        for method in ("isotonic", "temperature")
    ]
    print(
        json.dumps(
            {
                "corpus_docs": args.docs,
                "scorer": trained,
                "documents": {
                    "train": len(train_docs),
                    "gold_fit_half": len(fit_docs),
                    "gold_test_half": len(test_docs),
                },
                "results": results,
                "seconds": round(time.monotonic() - started, 1),
            },
            indent=2,
        )
    )
    for r in results:
        op = r["operating_point"]
        print(
            f"{r['method']:>11}: ECE raw {r['ece_raw']:.4f} -> calibrated "
            f"{r['ece_calibrated']:.4f} (ratio {r['ece_ratio']}, halved: "
            f"{r['ece_halved']}); target recall {op['target_recall']}: threshold "
            f"{op['threshold']} chosen on the fit half, held-out recall "
            f"{op['test_half_recall']} (met: {op['target_met']}), precision "
            f"{op['test_half_precision']}, workload {op['test_half_workload']}"
        )


if __name__ == "__main__":
    main()

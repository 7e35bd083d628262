"""The listwise term and the rival rule (issue 28, item 4) on dev data only:
starters built as ``make setup`` builds them, trained pointwise (weight 0)
and with the listwise term (``TrainConfig.listwise``), over several seeds,
each read alone on the real-documents dev and spent splits; a starter whose
silver validation chose a rival margin is read with its rivals and without.

    python bench/bench_listwise.py [--weights 0,1] [--seeds 0,1,2]
        [--device cuda] [--work DIR]

Prints one JSON line a starter, then one a weight: mean F1 per split and
each mistake kind caught over the seeds. About 10 minutes a starter on two
CPU cores, under a minute on a GPU. Needs ``../shared/`` (opinions, NLI
pairs).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from statistics import mean

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import bench_real_documents as real  # noqa: E402

from pipeline.score import NLIScorer  # noqa: E402
from tools.starter_scorer import CONFIG  # noqa: E402

SPLITS = ("dev", "spent")


def read(scorer, opinions, splits) -> dict:
    """F1 and each mistake kind caught, per split."""
    row = {}
    for split, (claims, labels, _) in splits.items():
        documents = {k: opinions[k] for k in {p.document_id for p in claims}}
        m = real.measure(documents, claims, labels, scorer)
        row[split] = {"f1": m["f1"], "right_by_kind": m["right_by_kind"]}
    return row


def pooled(rows: list[dict], split: str) -> dict:
    """Mean F1 and the kinds' counts summed over the seeds."""
    caught: dict[str, list[int]] = {}
    for row in rows:
        for kind, text in row[split]["right_by_kind"].items():
            right, n = (int(x) for x in text.split("/"))
            total = caught.setdefault(kind, [0, 0])
            total[0] += right
            total[1] += n
    return {
        "f1_mean": round(mean(r[split]["f1"] for r in rows), 4),
        "right_by_kind": {k: f"{a}/{b}" for k, (a, b) in sorted(caught.items())},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--weights", default="0,1")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--device", help="cpu, cuda... (default: CUDA when present)")
    parser.add_argument("--work", type=Path, default=Path("var/bench-listwise"))
    args = parser.parse_args()
    opinions = real.load_opinions()
    splits = {s: real.load_benchmark(s) for s in SPLITS}
    benchmark_docs = splits["dev"][2]  # every split's opinions
    for weight in (float(w) for w in args.weights.split(",")):
        rows = []
        for seed in (int(s) for s in args.seeds.split(",")):
            folder = real.starter_scorer(
                args.work / f"starter-w{weight:g}-s{seed}",
                opinions,
                benchmark_docs,
                seed,
                config=replace(CONFIG, listwise=weight, device=args.device),
            )
            scorer = NLIScorer(str(folder), device=args.device)
            row = {"weight": weight, "seed": seed, "margin": scorer.rival_margin}
            row.update(read(scorer, opinions, splits))
            if scorer.rival_margin is not None:
                scorer.rival_margin = None
                row["rivals_unread"] = read(scorer, opinions, splits)
            print(json.dumps(row), flush=True)
            rows.append(row)
        summary = {"weight": weight, "seeds": len(rows)}
        summary.update({split: pooled(rows, split) for split in SPLITS})
        print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()

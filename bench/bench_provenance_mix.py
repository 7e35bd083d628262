"""Choosing provenance-train's default mix on the data a setting may be
chosen on: HaluEval QA items 4,000-7,999 (dev), nothing measure-only.

Each mix (labelled items / silver pairs) trains from the command line on
HaluEval QA items 0-3,999, as ``bench_provenance.py`` trains, and is read on
``--lines`` dev lines (two items each) in the default mode (bi-encoder
relevance, fp32 scorer). The length baseline is printed beside it: HaluEval
QA's hallucinated answers run long, so a mix that only beats it by length
says little, which is why the zero-shot sets are measured once, after.

    python bench/bench_provenance_mix.py [--mixes 2000/6000,3000/4000]
        [--lines 500] [--work DIR] [--base MODEL_OR_DIR]

``--base`` trains from another base (an entailment base from ``train-nli``,
say) to compare bases on the same dev lines.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import provenance_sets as sets  # noqa: E402
from bench_provenance import checked_auc, train  # noqa: E402

from pipeline.checkers.provenance.checker import named_relevance  # noqa: E402
from pipeline.score import NLIScorer  # noqa: E402


def dev_auc(scorer_dir: Path, raw: list[dict]) -> float:
    relevance, scorer = named_relevance("embedding"), NLIScorer(str(scorer_dir))
    return checked_auc(raw, relevance=relevance, scorer=scorer)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mixes", default="2000/6000,3000/4000")
    parser.add_argument("--lines", type=int, default=500)
    parser.add_argument("--base", help="provenance-train's --base (default its own)")
    parser.add_argument(
        "--work", type=Path, default=ROOT / "var" / "bench-provenance-mix"
    )
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    dev = sets.halueval_qa(*sets.QA_DEV, n=args.lines, name="halueval_qa_dev")
    baseline = sets.baseline_row("halueval_qa_dev", dev)
    rows = []
    for mix in args.mixes.split(","):
        labelled, silver = mix.split("/")
        scorer, minutes = train(
            args.work,
            out_name=f"scorer-{labelled}-{silver}"
            + (f"-{Path(args.base).name}" if args.base else ""),
            options=(
                "--labelled-limit",
                labelled,
                "--silver-limit",
                silver,
                *(("--base", args.base) if args.base else ()),
            ),
        )
        rows.append(
            {
                "mix": mix,
                "dev_auc": round(dev_auc(scorer, dev), 4),
                "train_minutes": round(minutes, 1),
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    print(
        json.dumps(
            {
                "dev": f"HaluEval QA {sets.QA_DEV[0]}-{sets.QA_DEV[1] - 1}, "
                f"{args.lines} lines ({len(dev)} items)",
                "length_auc": round(baseline["length"], 4),
                "overlap_auc": round(baseline["overlap"], 4),
                "mixes": rows,
                "best": max(rows, key=lambda r: r["dev_auc"])["mix"],
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()

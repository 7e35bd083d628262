"""Which precision the RAG checker may compute in, chosen on dev lines only:
HaluEval QA items 4,000-7,999, nothing measure-only.

For each mix of the relevance embedder's and the scorer's precision (bf16
where this CPU computes it, int8, fp32): ROC AUC on the dev lines, the share
of verdicts the same as the first mix's, and items a second on the
throughput items of ``bench_provenance.py`` (the test questions, each with
ten context sentences), all in one run. Issue 31 lets int8 in where it costs
at most 0.005.

    python bench/bench_provenance_precision.py --scorer DIR [--lines 500]

``DIR``: a scorer ``provenance-train`` built on HaluEval QA lines 0-3,999
(``bench_provenance.py`` trains one into ``var/bench-provenance/scorer``).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import provenance_sets as sets  # noqa: E402
from bench_provenance import checked_auc, items_per_second, speed_items  # noqa: E402

from pipeline.checkers.provenance.relevance import BiEncoderRelevance  # noqa: E402
from pipeline.score import NLIScorer  # noqa: E402

#: (embedder, scorer) keyword arguments; the first is the reference.
MIXES = {
    "bf16 / bf16": ({"bf16": True}, {"bf16": True}),
    "int8 / bf16": ({"quantize": True}, {"bf16": True}),
    "int8 / int8": ({"quantize": True}, {"quantize": True}),
    "fp32 / fp32": ({"bf16": False}, {"bf16": False}),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scorer", type=Path, required=True)
    parser.add_argument("--lines", type=int, default=500)
    args = parser.parse_args()
    dev = sets.halueval_qa(*sets.QA_DEV, n=args.lines, name="halueval_qa_dev")
    speed = speed_items()
    print("| embedder / scorer | dev AUC | verdicts as the first | items/s |")
    print("| --- | --- | --- | --- |")
    reference = None
    for name, (embedder, scorer_options) in MIXES.items():
        relevance = BiEncoderRelevance(**embedder)
        scorer = NLIScorer(str(args.scorer), **scorer_options)
        auc, results = checked_auc(dev, relevance=relevance, scorer=scorer)
        verdicts = [r.verdict for r in results]
        reference = reference or verdicts
        same = sum(a == b for a, b in zip(reference, verdicts, strict=True))
        rate = items_per_second(speed, relevance=relevance, scorer=scorer)
        print(
            f"| {name} | {auc:.4f} | {same / len(verdicts):.3f} of {len(verdicts)} "
            f"| {rate:.1f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()

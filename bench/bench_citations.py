"""Fabricated legal citations in brief excerpts built from real opinions
(``bench/data/citations``, see its README): P/R/F1 of hallucinated
citations with the paper's relaxed matching, recall per kind, citations
found, absent-but-real citations called hallucinated, and throughput.

The proposition scorer is trained without a label, on silver pairs of the
opinions the *dev* excerpts cite (the test split cites none of them), from
``--base``, by default the best base there is (the starter scorer where
``make setup`` built one); pass ``--scorer`` to use a trained one. Its
threshold is the one with the best F1 on ``dev``; the figures are those of
``--split`` (``test`` by default), fp32 and int8.

    python bench/bench_citations.py [--split test] [--scorer DIR] [--base MODEL]
        [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import torch  # noqa: E402
from citation_caselaw import load_caselaw, read_jsonl  # noqa: E402

from pipeline.bases import base_or_best  # noqa: E402
from pipeline.checkers.citations import (  # noqa: E402
    CaseLaw,
    CitationChecker,
    check_citations,
    citation_claims,
    find_citations,
)
from pipeline.checkers.citations.commands import result_to_json  # noqa: E402
from pipeline.checkers.citations.evaluate import evaluate_citations  # noqa: E402
from pipeline.checkers.citations.silver import proposition_examples  # noqa: E402
from pipeline.score import NLIScorer  # noqa: E402
from pipeline.train import TrainConfig, train_scorer  # noqa: E402
from pipeline.types import Document  # noqa: E402

DATA = ROOT / "bench" / "data" / "citations"


def briefs(split: str) -> dict[str, Document]:
    return {
        b["id"]: Document(b["id"], b["text"])
        for b in read_jsonl(DATA / f"briefs_{split}.jsonl")
    }


def train_proposition_scorer(caselaw: CaseLaw, out: Path, base: str) -> Path:
    """A zero-label scorer from ``base`` and silver pairs of the opinions the
    dev excerpts cite (by the truth file's ``opinion_id``)."""
    if (out / "metadata.json").exists():
        return out
    dev = briefs("dev")
    cited = sorted(
        {t["opinion_id"] for t in read_jsonl(DATA / "truth_dev.jsonl")} - {None}
    )
    opinions = [o for o in map(caselaw.sources[0].opinion, cited) if o is not None]
    silver = proposition_examples(opinions, caselaw, seed=0)
    checker = CitationChecker(dev, caselaw=caselaw)
    config = TrainConfig(base=base, stages=("silver",), silver_epochs=2, seed=0)
    started = time.perf_counter()
    train_scorer(checker, citation_claims(dev), {}, out, config=config, silver=silver)
    print(f"trained the proposition scorer in {time.perf_counter() - started:.0f} s",
          file=sys.stderr)  # fmt: skip
    return out


def check_split(split: str, caselaw: CaseLaw, scorer) -> tuple[list, float]:
    """The split's results and the seconds they took (parsing, lookups,
    checks and scoring; the store and the model loaded beforehand)."""
    started = time.perf_counter()
    results = [
        r
        for d in briefs(split).values()
        for r in check_citations(
            find_citations(d.text, brief_id=d.id), caselaw, scorer=scorer
        )
    ]
    return results, time.perf_counter() - started


def at_threshold(results: list, threshold: float) -> list[dict]:
    """``cite-check`` lines with the proposition judged at ``threshold``
    (the results were scored with every proposition passing)."""
    lines = []
    for r in results:
        line = result_to_json(r)
        scores = [
            ch.score
            for ch in r.checks
            if ch.name == "proposition" and ch.score is not None
        ]
        if line["status"] != "hallucinated" and scores and scores[0] < threshold:
            line["status"], line["problems"] = (
                "hallucinated",
                ["proposition_not_supported"],
            )
        lines.append(line)
    return lines


def figures(split: str, lines: list[dict], seconds: float | None = None) -> dict:
    out = evaluate_citations(lines, read_jsonl(DATA / f"truth_{split}.jsonl"))
    if seconds:
        out["citations_per_second"] = round(len(lines) / seconds, 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", default="test", choices=("dev", "test"))
    parser.add_argument("--scorer", help="proposition scorer folder (default: train)")
    parser.add_argument(
        "--base", help="model the scorer starts from; default: the best base there is"
    )
    parser.add_argument("--work", default=str(ROOT / "var" / "bench-citations"))
    args = parser.parse_args()
    torch.set_num_threads(2)  # the figure promised is for 2 CPU cores
    caselaw = load_caselaw()
    folder = Path(args.scorer) if args.scorer else None
    if folder is None:
        folder = train_proposition_scorer(
            caselaw, Path(args.work) / "scorer", base_or_best(args.base)
        )
    out: dict = {"split": args.split, "torch_threads": torch.get_num_threads()}
    results, seconds = check_split(args.split, caselaw, None)
    out["no_scorer"] = figures(args.split, at_threshold(results, 0.0), seconds)
    # The threshold is the one with the best F1 on dev (tuned there only).
    for quantize in (False, True):
        scorer = NLIScorer(str(folder), device="cpu", quantize=quantize)
        scorer.threshold = 0.0
        dev, _ = check_split("dev", caselaw, scorer)
        best = max(
            (figures("dev", at_threshold(dev, t / 100))["f1"], t / 100)
            for t in range(5, 100, 5)
        )
        results, seconds = check_split(args.split, caselaw, scorer)
        name = "with_scorer_int8" if quantize else "with_scorer"
        out[name] = {
            "threshold": best[1],
            "dev_f1": best[0],
            **figures(args.split, at_threshold(results, best[1]), seconds),
        }
    out["scorer"] = str(folder)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()

"""Training and scoring the scorer on a GPU against the CPU of the same machine.

The product fine-tunes its scorer again and again as labels come in, on a GPU
where the deployment has one (docker compose's ``gpu`` profile) and on the CPU
otherwise. This measures what the GPU buys on the same work, in one run on one
machine: a whole ``train_scorer`` run as the app starts it (silver stage, then
the expert stage on ``--labels`` expert labels, early stopping and threshold
on a validation split) and scoring pairs with the trained scorer, once per
device. It prints each time, the throughput and the GPU's speed-up (scoring
at each device's best batch size); without CUDA it measures the CPU alone.

    python bench/bench_gpu.py [--docs 300] [--labels 500] [--silver-limit 6000]
        [--score-pairs 8000] [--score-batches 32,256] [--base MODEL]
        [--devices cpu,cuda] [--json OUT]

``--base`` names the encoder to start from (a model folder, or the packaged
default), so the bench runs where only a copy of the weights is at hand; it
must hold fp32 weights (transformers keeps a checkpoint's dtype, and fp16
weights train to nothing and time another computation).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_quality import split_corpus  # noqa: E402

from pipeline.checkers.extraction import ExtractionChecker  # noqa: E402
from pipeline.score import DEFAULT_BASE_MODEL, NLIScorer  # noqa: E402
from pipeline.train import TrainConfig, train_scorer  # noqa: E402
from tools.demo_corpus import generate_corpus  # noqa: E402


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def measure(device: str, *, corpus, labels, silver, pairs, base: str, args) -> dict:
    """One training run and one scoring pass on ``device``, timed."""
    documents = {d.id: d for d in corpus.documents}
    config = TrainConfig(base=base, silver_limit=args.silver_limit, device=device)
    with tempfile.TemporaryDirectory() as out:
        _sync(device)
        started = time.perf_counter()
        metadata = train_scorer(
            ExtractionChecker(documents),
            corpus.claims,
            labels,
            out,
            config=config,
            silver=silver,
        )
        _sync(device)
        trained = time.perf_counter() - started
        scoring = {}
        for batch_size in args.score_batches:
            scorer = NLIScorer(out, device=device, batch_size=batch_size)
            scorer.score_pairs(pairs[:64])  # load and warm up outside the timing
            _sync(device)
            started = time.perf_counter()
            scorer.score_pairs(pairs)
            _sync(device)
            scoring[batch_size] = time.perf_counter() - started
    steps = {
        stage: info["examples"] * info["epochs_run"]
        for stage, info in metadata["stages"].items()
        if info
    }
    return {
        "device": device,
        "train_seconds": round(trained, 2),
        "examples_seen": sum(steps.values()),
        "train_examples_per_second": round(sum(steps.values()) / trained, 1),
        "validation_f1": metadata["validation"].get("f1"),
        # Scoring at each batch size: pairs a second.
        "score_pairs_per_second": {
            b: round(len(pairs) / seconds, 1) for b, seconds in scoring.items()
        },
        "score_seconds": round(min(scoring.values()), 3),
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=300)
    parser.add_argument("--labels", type=int, default=500)
    parser.add_argument("--silver-limit", type=int, default=6000)
    parser.add_argument("--score-pairs", type=int, default=8000)
    parser.add_argument(
        "--score-batches",
        type=lambda v: [int(b) for b in v.split(",")],
        default=[32, 256],
        help="scoring batch sizes to time (the product scores in 32s)",
    )
    parser.add_argument("--base", default=DEFAULT_BASE_MODEL)
    parser.add_argument("--devices", default="cpu,cuda")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)

    import torch

    devices = [d for d in args.devices.split(",") if d]
    if "cuda" in devices and not torch.cuda.is_available():
        print("no CUDA device here: measuring the CPU alone")
        devices = [d for d in devices if d != "cuda"]
    corpus = generate_corpus(docs=args.docs, seed=0)
    _, labels, _ = split_corpus(corpus, test_share=0.0, n_labels=args.labels, seed=0)
    documents = {d.id: d for d in corpus.documents}
    checker = ExtractionChecker(documents)
    # The same silver pairs for every device: made once, outside the timing.
    silver = checker.silver_examples(corpus.claims, seed=0)
    pairs = [(e.premise, e.hypothesis) for e in silver]
    pairs = (pairs * (args.score_pairs // max(1, len(pairs)) + 1))[: args.score_pairs]
    machine = {
        "cpu_threads": torch.get_num_threads(),
        "gpu": torch.cuda.get_device_name(0) if "cuda" in devices else None,
    }
    print(f"{len(labels)} expert labels, {len(silver)} silver pairs, {machine}")
    rows = []
    for device in devices:
        row = measure(
            device,
            corpus=corpus,
            labels=labels,
            silver=silver,
            pairs=pairs,
            base=args.base,
            args=args,
        )
        rows.append(row)
        print(json.dumps(row))
    result = {"machine": machine, "runs": rows}
    by = {r["device"]: r for r in rows}
    if "cpu" in by and "cuda" in by:
        result["speedup"] = {
            "training": round(
                by["cpu"]["train_seconds"] / by["cuda"]["train_seconds"], 1
            ),
            "scoring": round(
                by["cpu"]["score_seconds"] / by["cuda"]["score_seconds"], 1
            ),
        }
        print(
            f"GPU speed-up on this machine: training x{result['speedup']['training']}, "
            f"scoring x{result['speedup']['scoring']}"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

"""The learning curve: F1 against the number of expert labels (paper Table 1, Fig. 4).

Four scorers on the demo corpus, checked on held-out documents no training step
saw (the same ones for every run):

    base            the untuned packaged encoder (no labels at all)
    silver          trained once on silver labels only
    expert          the base fine-tuned on N expert labels
    silver>expert   the silver scorer fine-tuned on the same N expert labels

at N = 100 / 200 / 300 / 400 / 500. Expert labels are taken on whole documents
of the training part; the label sets are nested (the 100 are among the 200...).
As in the product, ``train_scorer`` keeps 20% of the labelled documents of each
run for early stopping and the threshold, so "N labels" is the whole budget,
validation included; expert and silver>expert at one N share that split.

The silver stage runs once, validated on the smallest label set (which every
run holds, so no run borrows labels it would not have). The silver row at N is
those silver weights with the threshold re-picked on that run's validation
split: exactly where silver>expert starts before its first expert step.

Prints the table, the training time for the largest N + the silver limit, and
writes ``learning_curve.json`` and ``learning_curve.svg`` to ``--out-dir``.

    python bench/bench_learning_curve.py [--docs 700] [--sizes 100,200,300,400,500]
        [--silver-limit 10000] [--seed 0] [--replay 0] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_quality import evaluate_on, split_corpus  # noqa: E402

from annotator.charts import Reference, Series, line_chart  # noqa: E402
from pipeline.checkers.extraction import ExtractionChecker  # noqa: E402
from pipeline.evaluate import best_threshold  # noqa: E402
from pipeline.score import NLIScorer  # noqa: E402
from pipeline.train import TrainConfig, build_dataset, train_scorer  # noqa: E402
from tools.demo_corpus import generate_corpus  # noqa: E402

SCORERS = ("base", "silver", "expert", "silver>expert")
#: Paper Table 1, for the reader's eye only: another corpus, another model.
PAPER_F1 = {"base": 0.253, "silver": 0.804, "expert": 0.822, "silver>expert": 0.891}


def validation_threshold(scorer, documents, predictions, labels, *, config) -> float:
    """The threshold ``train_scorer`` would pick for ``scorer`` on this label set.

    Rebuilds the run's validation split (same seed, same documents) and picks
    the F1-best threshold, counting predictions the aligner already rejects.
    """
    pairs = ExtractionChecker(documents).training_pairs(predictions, only=set(labels))
    data = build_dataset(pairs, labels, config=config)
    scores = scorer.score_pairs([(e.premise, e.hypothesis) for e in data.validation])
    forced_safe = data.validation_forced - data.validation_forced_unsafe
    unsafe = [not e.supported for e in data.validation]
    unsafe += [True] * data.validation_forced_unsafe + [False] * forced_safe
    forced = [False] * len(scores) + [True] * data.validation_forced
    threshold, _ = best_threshold(
        scores + [0.0] * data.validation_forced, unsafe, forced=forced
    )
    return threshold


def stage_summary(metadata: dict) -> dict:
    return {
        "threshold": round(metadata["threshold"], 4),
        "label_counts": metadata["label_counts"],
        "stages": metadata["stages"],
        "train_seconds": metadata["train_seconds"],
        "device": metadata["device"],
    }


def render_svg(curve: dict, sizes: list[int], *, title: str) -> str:
    """Figure 4: F1 against expert labels, one line per scorer; the untuned
    base is a reference line (it saw no labels)."""
    series = [
        Series(name, [(n, curve[name][str(n)]) for n in sizes])
        for name in ("silver", "expert", "silver>expert")
    ]
    return line_chart(
        series,
        title=title,
        x_label="expert labels (validation included)",
        y_label="F1 flagging unsafe (held-out documents)",
        x_range=(0, max(sizes)),
        y_range=(0, 1),
        references=[Reference(curve["base"], "untuned base")],
    )


def format_table(rows: list[dict]) -> str:
    lines = [
        f"{'scorer':<15}{'labels':>7}{'P':>8}{'R':>8}{'F1':>8}"
        f"{'thresh':>8}{'best ep':>9}{'train s':>9}"
    ]
    for r in rows:
        lines.append(
            f"{r['scorer']:<15}{r['labels']:>7}{r['precision']:>8.3f}"
            f"{r['recall']:>8.3f}{r['f1']:>8.3f}{r['threshold']:>8.3f}"
            f"{r.get('best_epoch', '-')!s:>9}{r.get('train_seconds', '-')!s:>9}"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=700)
    parser.add_argument("--sizes", default="100,200,300,400,500")
    parser.add_argument("--silver-limit", type=int, default=10000)
    parser.add_argument("--silver-epochs", type=int)
    parser.add_argument("--human-epochs", type=int)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--replay",
        type=float,
        default=0.0,
        help="silver pairs replayed in the expert stage, per expert pair",
    )
    parser.add_argument("--device", help="cpu, cuda...; default: CUDA when present")
    parser.add_argument("--out-dir", default=str(Path(__file__).parent / "out"))
    parser.add_argument(
        "--quick",
        action="store_true",
        help="tiny run for development: 80 docs, sizes 50,100, silver 300, 1 epoch",
    )
    args = parser.parse_args()
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # one "Writing model shards" bar per save
    if args.quick:
        args.docs, args.sizes, args.silver_limit = 80, "50,100", 300
        args.silver_epochs = args.silver_epochs or 1
        args.human_epochs = args.human_epochs or 1
    sizes = sorted(int(s) for s in args.sizes.split(","))
    common = dict(seed=args.seed, device=args.device, **_epochs(args))

    corpus = generate_corpus(docs=args.docs, seed=args.seed)
    splits = {
        n: split_corpus(corpus, test_share=0.2, n_labels=n, seed=args.seed)
        for n in sizes
    }
    test_docs, _, gold = splits[sizes[0]]
    label_sets = {n: splits[n][1] for n in sizes}
    for small, large in zip(sizes, sizes[1:], strict=False):
        # Same seed: same test documents, and each label set extends the last.
        assert splits[large][0] == test_docs
        assert label_sets[small].keys() <= label_sets[large].keys()
    documents = {d.id: d for d in corpus.documents}
    train_predictions = [
        p for p in corpus.predictions if p.document_id not in test_docs
    ]
    test_labelled = sum(p.document_id in test_docs for p in corpus.predictions)
    test_unsafe = sum(
        gold[p.id].label == "unsafe"
        for p in corpus.predictions
        if p.document_id in test_docs
    )
    print(
        f"demo corpus: {args.docs} docs, {len(corpus.predictions)} predictions; "
        f"held out: {len(test_docs)} docs, {test_labelled} predictions "
        f"({test_unsafe} unsafe)",
        flush=True,
    )

    rows: list[dict] = []
    runs: dict[str, dict] = {}

    def record(scorer_name, n, scorer, metadata=None):
        result = evaluate_on(scorer, corpus, test_docs, gold)
        row = {
            "scorer": scorer_name,
            "labels": n,
            **{k: result[k] for k in ("precision", "recall", "f1")},
            "confusion": result["confusion"],
            "threshold": round(scorer.threshold, 4),
        }
        if metadata:
            stage = metadata["stages"]["human"] or {}
            row["best_epoch"] = stage.get("best_epoch")
            row["epochs_run"] = stage.get("epochs_run")
            row["val_f1"] = stage.get("val_f1")
            row["train_seconds"] = metadata["train_seconds"]
        rows.append(row)
        print(
            f"  {scorer_name:<14} N={n:<4} P={row['precision']:.3f} "
            f"R={row['recall']:.3f} F1={row['f1']:.3f} (threshold "
            f"{row['threshold']:.3f}, best epoch {row.get('best_epoch', '-')})",
            flush=True,
        )

    record("base", 0, NLIScorer(device=args.device))
    with tempfile.TemporaryDirectory(prefix="learning-curve-") as tmp:
        silver_dir = Path(tmp) / "silver"
        print(f"silver stage ({args.silver_limit} silver labels)...", flush=True)
        silver_config = TrainConfig(
            stages=("silver",), silver_limit=args.silver_limit, **common
        )
        silver_meta = train_scorer(
            ExtractionChecker(documents),
            train_predictions,
            label_sets[sizes[0]],
            silver_dir,
            config=silver_config,
        )
        runs["silver"] = stage_summary(silver_meta)
        if silver_meta["label_counts"]["silver"] < args.silver_limit:
            print(
                f"  only {silver_meta['label_counts']['silver']} silver pairs "
                f"available (< {args.silver_limit}): raise --docs",
                flush=True,
            )
        print(
            f"  {silver_meta['train_seconds']} s, best epoch "
            f"{silver_meta['stages']['silver']['best_epoch']}",
            flush=True,
        )
        silver_scorer = NLIScorer(str(silver_dir), device=args.device)
        for n in sizes:
            labels = label_sets[n]
            print(f"N = {n} expert labels", flush=True)
            human_config = TrainConfig(stages=("human",), **common)
            threshold = validation_threshold(
                silver_scorer,
                documents,
                train_predictions,
                labels,
                config=human_config,
            )
            record(
                "silver",
                n,
                NLIScorer(str(silver_dir), device=args.device, threshold=threshold),
            )
            # Replay (--replay) is the silver>expert recipe's: the expert
            # row stays the paper's "human only".
            for name, base, replay in (
                ("expert", human_config.base, 0.0),
                ("silver>expert", str(silver_dir), args.replay),
            ):
                out = Path(tmp) / f"{name.replace('>', '-')}-{n}"
                metadata = train_scorer(
                    ExtractionChecker(documents),
                    train_predictions,
                    labels,
                    out,
                    config=TrainConfig(
                        base=base, stages=("human",), replay=replay, **common
                    ),
                )
                runs[f"{name}@{n}"] = stage_summary(metadata)
                record(name, n, NLIScorer(str(out), device=args.device), metadata)
                shutil.rmtree(out)

    largest = sizes[-1]
    training = {
        "silver_labels": silver_meta["label_counts"]["silver"],
        "expert_labels": largest,
        "silver_stage_s": silver_meta["train_seconds"],
        "expert_stage_s": runs[f"silver>expert@{largest}"]["train_seconds"],
        "device": silver_meta["device"],
        "threads": _threads(),
    }
    training["total_s"] = round(
        training["silver_stage_s"] + training["expert_stage_s"], 1
    )
    timings = [training]
    cuda = _cuda_available()
    if cuda and not training["device"].startswith("cuda"):
        timings.append(
            _time_one_run(
                documents, train_predictions, label_sets[largest], args, "cuda"
            )
        )
    elif not cuda:
        print("CUDA: not available on this machine", flush=True)

    curve = {
        "base": next(r["f1"] for r in rows if r["scorer"] == "base"),
        **{
            name: {str(r["labels"]): r["f1"] for r in rows if r["scorer"] == name}
            for name in SCORERS[1:]
        },
    }
    wins = {
        str(n): curve["silver>expert"][str(n)] > curve["expert"][str(n)] for n in sizes
    }
    result = {
        "corpus_docs": args.docs,
        "seed": args.seed,
        "held_out_docs": len(test_docs),
        "held_out_predictions": test_labelled,
        "held_out_unsafe": test_unsafe,
        "sizes": sizes,
        "silver_limit": args.silver_limit,
        "replay": args.replay,
        "silver_validated_on": sizes[0],
        "rows": rows,
        "curve": curve,
        "silver_then_expert_beats_expert": wins,
        "beats_at_every_size": all(wins.values()),
        "training_time": timings,
        "runs": runs,
        "paper_table1_f1": PAPER_F1,
    }
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "learning_curve.json").write_text(
        json.dumps(result, indent=2) + "\n", encoding="utf-8"
    )
    svg = render_svg(
        curve,
        sizes,
        title=f"Demo corpus ({args.docs} docs, {len(test_docs)} held out): "
        "F1 vs expert labels",
    )
    (out_dir / "learning_curve.svg").write_text(svg, encoding="utf-8")

    print()
    print(format_table(rows))
    print()
    print(
        "silver>expert beats expert at "
        + ", ".join(f"{n}: {'yes' if w else 'NO'}" for n, w in wins.items())
    )
    for t in timings:
        print(
            f"training {t['expert_labels']} expert + {t['silver_labels']} silver "
            f"labels on {t['device']} ({t.get('threads', '-')} threads): "
            f"{t['total_s']} s"
            + (
                f" (silver stage {t['silver_stage_s']} s + expert stage "
                f"{t['expert_stage_s']} s)"
                if "silver_stage_s" in t
                else " (one run, both stages)"
            )
        )
    print(
        f"wrote {out_dir / 'learning_curve.json'} and {out_dir / 'learning_curve.svg'}"
    )


def _epochs(args) -> dict[str, int]:
    """Epoch overrides given on the command line (else TrainConfig's defaults)."""
    given = {"silver_epochs": args.silver_epochs, "human_epochs": args.human_epochs}
    return {k: v for k, v in given.items() if v is not None}


def _threads() -> int:
    import torch

    return torch.get_num_threads()


def _cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def _time_one_run(documents, predictions, labels, args, device: str) -> dict:
    """Both stages in one ``train_scorer`` call on ``device``."""
    config = TrainConfig(
        stages=("silver", "human"),
        silver_limit=args.silver_limit,
        seed=args.seed,
        device=device,
        **_epochs(args),
    )
    with tempfile.TemporaryDirectory(prefix="learning-curve-time-") as tmp:
        metadata = train_scorer(
            ExtractionChecker(documents), predictions, labels, tmp, config=config
        )
    return {
        "silver_labels": metadata["label_counts"]["silver"],
        "expert_labels": len(labels),
        "total_s": metadata["train_seconds"],
        "device": metadata["device"],
    }


if __name__ == "__main__":
    main()

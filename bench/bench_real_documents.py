"""Day one on real documents: flag unsafe claims over court opinions
with zero labels.

Reads the hand-checked claims of ``bench/data/caselaw_claims.jsonl``
(see its README) over opinions of ``../shared/data/caselaw/opinions.jsonl``
and checks one split:

- ``dev`` (10 opinions): tune, look at items, write rules from them;
- ``spent`` (20 opinions): the former test split, read while rules were
  written, so it may be read like ``dev`` but a figure on it is never
  reported as a test figure;
- ``test`` (20 fresh opinions, chosen by the rule in the data README): never
  read item by item by whoever writes rules or tunes; run only to report.

Each split is checked with:

- no scorer: alignment and the fields the span states (a project before its
  first scorer judges nothing else),
- the demo scorer: silver + 500 human labels on the demo corpus (``make demo``),
- the starter scorer: silver pairs from the demo corpus and the opinions
  outside the benchmark, NLI pairs mixed in as ``make setup`` does (the
  base every project starts from). It is built
  without any benchmark opinion: the opinions of all three splits are held
  out, so no split's documents were seen by it,
- the project's zero-label scorer: the starter tuned on silver pairs of the
  split's own documents and claims, as the app trains it before the
  first label (transductive: it trains on the measured split's documents).

The scorers are kept under ``--work`` and reused when present. Scorers
built there before the fresh ``test`` split existed are stale: that starter
held out only the dev and spent opinions, and ``project-test`` was trained
on the former test split's documents. Build them again (a new ``--work``
folder) before reporting ``test``.

Prints one JSON object: F1 of flagging unsafe per scorer and the share of
each mistake kind judged right. Tune on ``dev``; report ``test`` once.

    python bench/bench_real_documents.py [--split dev|spent|test] [--work DIR]
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

from pipeline.checkers.extraction import ExtractionChecker  # noqa: E402
from pipeline.checkers.extraction.check import check_claims  # noqa: E402
from pipeline.evaluate import evaluate_checked  # noqa: E402
from pipeline.jsonl import claim_from_json  # noqa: E402
from pipeline.score import NLIScorer  # noqa: E402
from pipeline.train import TrainConfig, train_scorer  # noqa: E402
from pipeline.types import Document, Label  # noqa: E402
from tools.demo_corpus import generate_corpus  # noqa: E402
from tools.starter_scorer import CONFIG, NLI_PAIRS, build_starter, read_nli  # noqa: E402

BENCHMARK = ROOT / "bench" / "data" / "caselaw_claims.jsonl"
OPINIONS = ROOT.parent / "shared" / "data" / "caselaw" / "opinions.jsonl"
NLI = ROOT.parent / "shared" / "data" / "nli" / "pairs.jsonl"


def load_benchmark(split: str):
    rows = [json.loads(line) for line in BENCHMARK.open(encoding="utf-8")]
    claims = [claim_from_json(r) for r in rows if r["split"] == split]
    labels = {
        r["id"]: Label(r["id"], r["label"], {"kind": r["mistake"]})
        for r in rows
        if r["split"] == split
    }
    benchmark_docs = {r["document_id"] for r in rows}
    return claims, labels, benchmark_docs


def load_opinions() -> dict[str, Document]:
    out = {}
    for line in OPINIONS.open(encoding="utf-8"):
        r = json.loads(line)
        out[r["id"]] = Document(r["id"], r["text"])
    return out


def demo_scorer(folder: Path, seed: int) -> Path:
    """Silver + 500 human labels on 600 demo documents, as ``make demo``."""
    if not (folder / "metadata.json").is_file():
        corpus = generate_corpus(docs=600, seed=seed)
        labels = {lab.claim_id: lab for lab in corpus.labels[:500]}
        documents = {d.id: d for d in corpus.documents}
        train_scorer(
            ExtractionChecker(documents),
            corpus.claims,
            labels,
            folder,
            config=TrainConfig(seed=seed),
        )
    return folder


def starter_scorer(
    folder: Path,
    opinions: dict,
    held_out: set,
    seed: int,
    *,
    config: TrainConfig = CONFIG,
    nli_pairs: int = NLI_PAIRS,
) -> Path:
    """The starter as ``make setup`` builds it (``nli_pairs`` NLI pairs
    mixed in; ``config`` for the benches that vary its recipe) from every
    opinion outside the benchmark, so the figures are on documents it never
    saw."""
    if not (folder / "metadata.json").is_file():
        kept = {k: d for k, d in opinions.items() if k not in held_out}
        nli = read_nli([str(NLI)] if NLI.is_file() else [], nli_pairs)
        build_starter(folder, kept, seed=seed, config=config, nli=nli)
    return folder


def project_scorer(folder: Path, base: Path, documents, claims, seed) -> Path:
    """What the app trains for a project with no labels: silver pairs of its
    own documents and claims, starting from the starter."""
    if not (folder / "metadata.json").is_file():
        train_scorer(
            ExtractionChecker(documents),
            claims,
            {},
            folder,
            config=TrainConfig(base=str(base), stages=("silver",), seed=seed),
        )
    return folder


def measure(documents, claims, labels, scorer) -> dict:
    report = check_claims(documents, claims, scorer=scorer)
    result = evaluate_checked(report.checked, labels)
    return {
        "f1": result["f1"],
        "precision": result["precision"],
        "recall": result["recall"],
        "confusion": result["confusion"],
        "right_by_kind": {
            kind: f"{round(row['accuracy'] * row['n'])}/{row['n']}"
            for kind, row in result["by_kind"].items()
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--split",
        default="test",
        choices=("dev", "spent", "test"),
        help="dev: tune and write rules; spent: the former test split, read "
        "like dev, never reported as a test figure; test: the fresh split, "
        "run only to report (default)",
    )
    parser.add_argument("--work", default="var/bench-real", help="scorers kept here")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if not OPINIONS.is_file():
        sys.exit(f"{OPINIONS} is not here: this benchmark needs ../shared/")
    work = Path(args.work)
    claims, labels, benchmark_docs = load_benchmark(args.split)
    opinions = load_opinions()
    documents = {k: opinions[k] for k in {p.document_id for p in claims}}
    starter = starter_scorer(work / "starter", opinions, benchmark_docs, args.seed)
    project = project_scorer(
        work / f"project-{args.split}", starter, documents, claims, args.seed
    )
    scorers = {
        "no scorer (alignment, stated fields)": None,
        "demo scorer (500 labels)": NLIScorer(
            str(demo_scorer(work / "demo", args.seed))
        ),
        "starter (zero labels)": NLIScorer(str(starter)),
        "project zero-label scorer": NLIScorer(str(project)),
    }
    rows = {
        name: measure(documents, claims, labels, scorer)
        for name, scorer in scorers.items()
    }
    unsafe = sum(lab.label == "unsafe" for lab in labels.values())
    print(
        json.dumps(
            {
                "split": args.split,
                "documents": len(documents),
                "claims": len(claims),
                "unsafe": unsafe,
                "scorers": rows,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()

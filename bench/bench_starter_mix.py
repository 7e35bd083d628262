"""Choosing the starter's mix of silver and NLI pairs (issue 28) on dev data
only: the real-documents dev split (the starter alone and the project
zero-label scorer trained from it), HaluEval QA dev items 4,000-7,999
(the starter alone, zero-shot) and the NLI pairs' held-out share (at most
300 pairs per source).

    python bench/bench_starter_mix.py [--mixes 8000/0,4000/4000,8000/4000]
        [--work DIR]

Each mix is ``SILVER/NLI`` pairs, two passes, or ``SILVER/NLI/PASSES``
(the curve of training steps against these figures: issue 31); the
starters and project scorers are kept under ``--work`` and reused. Prints
one JSON line a mix.
Needs ``../shared/`` (opinions, NLI pairs, HaluEval).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import bench_real_documents as real  # noqa: E402
import provenance_sets as sets  # noqa: E402
from bench_provenance_mix import dev_auc  # noqa: E402

from pipeline.nli import per_source, read_nli_pairs, split_pairs  # noqa: E402
from pipeline.score import NLIScorer  # noqa: E402
from tools.starter_scorer import CONFIG  # noqa: E402

HELD_OUT_PER_SOURCE = 300


def held_out_pairs() -> list:
    pairs, _ = read_nli_pairs([real.NLI])
    _, held = split_pairs(pairs)
    by_source: dict[str, list] = {}
    for p in held:
        by_source.setdefault(p.source, []).append(p)
    return [p for group in by_source.values() for p in group[:HELD_OUT_PER_SOURCE]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mixes", default="8000/0,4000/4000,8000/4000")
    parser.add_argument("--work", type=Path, default=Path("var/bench-starter-mix"))
    args = parser.parse_args()
    claims, labels, benchmark_docs = real.load_benchmark("dev")
    opinions = real.load_opinions()
    documents = {k: opinions[k] for k in {p.document_id for p in claims}}
    held = held_out_pairs()
    qa_dev = sets.halueval_qa(*sets.QA_DEV, n=500, name="halueval_qa_dev")
    for mix in args.mixes.split(","):
        silver, nli, *passes = (int(n) for n in mix.split("/"))
        epochs = passes[0] if passes else CONFIG.silver_epochs
        name = f"s{silver}-n{nli}" + (f"-e{epochs}" if passes else "")
        starter = args.work / f"starter-{name}"
        started = time.monotonic()
        real.starter_scorer(
            starter,
            opinions,
            benchmark_docs,
            0,
            config=replace(CONFIG, silver_limit=silver, silver_epochs=epochs),
            nli_pairs=nli,
        )
        built = time.monotonic() - started
        project = real.project_scorer(
            starter.with_name(f"project-{name}"),
            starter,
            documents,
            claims,
            0,
        )
        alone = NLIScorer(str(starter))
        starter_row = real.measure(documents, claims, labels, alone)
        project_row = real.measure(documents, claims, labels, NLIScorer(str(project)))
        nli_auc = per_source(
            alone.score_pairs([(p.premise, p.hypothesis) for p in held]), held
        )
        print(
            json.dumps(
                {
                    "mix": mix,
                    "build_seconds": round(built),
                    "real_dev_starter_f1": starter_row["f1"],
                    "real_dev_project_f1": project_row["f1"],
                    "project_right_by_kind": project_row["right_by_kind"],
                    "halueval_qa_dev_auc_starter": round(dev_auc(starter, qa_dev), 4),
                    "nli_held_out_mean_auc": round(
                        sum(v["roc_auc"] for v in nli_auc.values()) / len(nli_auc), 4
                    ),
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()

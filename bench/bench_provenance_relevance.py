"""What RAG context sentences are ranked against, chosen on dev lines only:
HaluEval QA items 4,000-7,999, nothing measure-only.

For each claim whose context holds a sentence with the line's right answer
(among two or more sentences), the share whose selected sources include that
sentence, for right and hallucinated answers apart, ranking against the claim
(the question and the answer) or against the question alone (the paper's
query-passage relevance), with the packaged embedder and with BM25. No scorer
is needed: only the selection is read.

With ``--scorer DIR`` (a scorer ``provenance-train`` built on lines 0-3,999)
it also reads which source comes first on the labeling page, for claims with
two or more sources of which some but not all hold the right answer: the
share where the first holds it, taking the source each one alone best
supports (the check's rule, which costs one scored pair per source) or the
most relevant one (no pair).

    python bench/bench_provenance_relevance.py [--lines 500] [--scorer DIR]
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

from pipeline.checkers.provenance.check import (  # noqa: E402
    RANK_AGAINST,
    ProvenanceConfig,
    RankAgainst,
    check_items,
    context_units,
)
from pipeline.checkers.provenance.checker import named_relevance  # noqa: E402
from pipeline.checkers.provenance.items import item_from_json  # noqa: E402
from pipeline.score import NLIScorer  # noqa: E402


def right_answers(raw: list[dict]) -> dict[str, str]:
    """Each HaluEval line's right answer, by line (``_pair``'s id prefix)."""
    return {
        r["id"].rsplit("-", 1)[0]: r["answer"].lower()
        for r in raw
        if r["label"] == "supported"
    }


def selected_share(
    raw: list[dict], relevance, rank_against: RankAgainst
) -> dict[str, list]:
    """Per label, one bool per claim: its sources hold the answer's sentence."""
    right = right_answers(raw)
    config = ProvenanceConfig(rank_against=rank_against)
    results = check_items(
        [item_from_json(r) for r in raw], relevance=relevance, config=config
    )
    hits: dict[str, list] = {"supported": [], "hallucinated": []}
    for result in results:
        answer = right[result.item.id.rsplit("-", 1)[0]]
        units = context_units(result.item, split=config.split_contexts)
        label = result.item.label
        if label is None or len(units) < 2:
            continue
        if not any(answer in u.text.lower() for u in units):
            continue
        for claim in result.claims:
            hits[label].append(any(answer in s.text.lower() for s in claim.sources))
    return hits


def first_source_share(raw: list[dict], relevance, scorer) -> dict[str, list]:
    """Per rule, one bool per claim whose sources some but not all hold the
    right answer: the source that rule puts first holds it."""
    right = right_answers(raw)
    results = check_items(
        [item_from_json(r) for r in raw], relevance=relevance, scorer=scorer
    )
    hits: dict[str, list] = {"best supported": [], "most relevant": []}
    for result in results:
        answer = right[result.item.id.rsplit("-", 1)[0]]
        for claim in result.claims:
            holds = [answer in s.text.lower() for s in claim.sources]
            if claim.deciding is None or all(holds) or not any(holds):
                continue
            relevant = max(
                range(len(claim.sources)), key=lambda i: claim.sources[i].relevance
            )
            hits["best supported"].append(holds[claim.deciding])
            hits["most relevant"].append(holds[relevant])
    return hits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=500)
    parser.add_argument("--scorer", type=Path, help="also read the first source")
    args = parser.parse_args()
    dev = sets.halueval_qa(*sets.QA_DEV, n=args.lines, name="halueval_qa_dev")
    if args.scorer:
        hits = first_source_share(
            dev, named_relevance("embedding"), NLIScorer(str(args.scorer))
        )
        print("| first source | holds the right answer |")
        print("| --- | --- |")
        for rule, h in hits.items():
            print(f"| {rule} | {sum(h) / max(len(h), 1):.3f} of {len(h)} |")
        print()
    print("| relevance | ranked against | right answers | hallucinated answers |")
    print("| --- | --- | --- | --- |")
    for name in ("embedding", "lexical"):
        relevance = named_relevance(name)
        for against in RANK_AGAINST:
            hits = selected_share(dev, relevance, against)
            cells = [
                f"{sum(h) / len(h):.3f} of {len(h)}"
                for h in (hits["supported"], hits["hallucinated"])
            ]
            print(f"| {name} | {against} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()

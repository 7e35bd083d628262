"""Citations in real briefs: how many the finder finds, and how often the
checker calls a real citation hallucinated.

Reads the 124 real briefs and filings of ``../shared/data/caselaw/briefs.jsonl``
(evaluation only: their text is never copied into this repository), split
by brief: ``dev`` when the first 48 bits of sha256(id) / 2^48 fall below
0.4 (46 briefs), else ``test`` (78). Two measurements per split:

1. **Citations found.** Recall and precision of the citation finder against
   the case citations marked by hand, blind to the finder, in 10 excerpts
   (``data/real_briefs/found_<split>.jsonl``, offsets only; which excerpts:
   ``data/real_briefs/README.md``).
2. **False alarms.** The checker reads every brief against the stored
   opinions and the SCDB U.S. Reports index (volumes 329-579 complete), as
   ``python -m pipeline cite-check`` does, without a scorer (no proposition
   is judged). Every citation it calls hallucinated was looked at by hand
   (``data/real_briefs/flags_<split>.jsonl``): a **false alarm** when the
   brief's citation is right, a **brief error** when it is wrong as
   written (the flag is right). Flags with no hand label are counted apart
   and listed by ``--unlabelled``, so a change to the checker that raises
   new ones shows them.

Rules may be written from ``dev`` flags; ``test`` is run only to report.

    python bench/bench_real_briefs.py [--split dev|test] [--unlabelled]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from collections import Counter
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from citation_caselaw import CASELAW, load_caselaw, read_jsonl  # noqa: E402

from pipeline.checkers.citations import (  # noqa: E402
    CitationChecker,
    citation_claims,
    find_citations,
)
from pipeline.types import Document  # noqa: E402

DATA = ROOT / "bench" / "data" / "real_briefs"
DEV_SHARE = 0.4


def split_of(brief_id: str) -> str:
    """``dev`` or ``test``, from the brief's id alone (stable across runs)."""
    digest = hashlib.sha256(brief_id.encode("utf-8")).hexdigest()
    return "dev" if int(digest[:12], 16) / 16**12 < DEV_SHARE else "test"


def briefs(split: str) -> dict[str, str]:
    return {
        b["id"]: b["text"]
        for b in read_jsonl(CASELAW / "briefs.jsonl")
        if split_of(b["id"]) == split
    }


def citations_found(split: str, texts: dict[str, str]) -> dict:
    """Finder against hand marks: a marked citation is found when a found
    citation overlaps it; a found citation inside an excerpt that overlaps
    no mark is a false find."""
    excerpts = read_jsonl(DATA / f"found_{split}.jsonl")
    marked = found = hit = false = 0
    missed_by_form: Counter = Counter()
    for excerpt in excerpts:
        start, end = excerpt["start"], excerpt["end"]
        spans = [
            (start + c["s"], start + c["e"], c["form"]) for c in excerpt["citations"]
        ]
        finds = [
            (c.start, c.end)
            for c in find_citations(texts[excerpt["brief_id"]])
            if c.start < end and c.end > start
        ]
        marked += len(spans)
        found += len(finds)
        for s, e, form in spans:
            if any(fs < e and fe > s for fs, fe in finds):
                hit += 1
            else:
                missed_by_form[form] += 1
        false += sum(
            not any(fs < e and fe > s for s, e, _ in spans) for fs, fe in finds
        )
    return {
        "excerpts": len(excerpts),
        "marked": marked,
        "found": found,
        "recall": round(hit / marked, 3) if marked else None,
        "precision": round((found - false) / found, 3) if found else None,
        "missed_by_form": dict(missed_by_form),
    }


def flags(texts: dict[str, str]) -> list:
    """Every citation's result, as ``cite-check`` gives it."""
    documents = {i: Document(i, t) for i, t in texts.items()}
    results, _ = CitationChecker(documents, caselaw=load_caselaw()).results(
        citation_claims(documents)
    )
    return results


def label_of(citation, rows: list[dict]) -> dict | None:
    """The hand label of a flagged citation: the one whose span overlaps it
    (a change to the parser may move a citation's edges, not its place)."""
    return next(
        (r for r in rows if r["start"] < citation.end and citation.start < r["end"]),
        None,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", default="test", choices=("dev", "test"))
    parser.add_argument(
        "--unlabelled",
        action="store_true",
        help="also list the flags no hand label covers (brief id, offsets, cite)",
    )
    args = parser.parse_args()
    if not (CASELAW / "briefs.jsonl").is_file():
        sys.exit(f"{CASELAW} is not here: this benchmark needs ../shared/")
    texts = briefs(args.split)
    results = flags(texts)
    labels: dict[str, list[dict]] = {}
    for row in read_jsonl(DATA / f"flags_{args.split}.jsonl"):
        labels.setdefault(row["brief_id"], []).append(row)
    flagged = [r for r in results if r.status == "hallucinated"]
    judged: Counter = Counter()
    causes: Counter = Counter()
    unlabelled = []
    for r in flagged:
        label = label_of(r.citation, labels.get(r.citation.brief_id, []))
        if label is None:
            unlabelled.append(r)
            continue
        judged[label["judgement"]] += 1
        causes[f"{label['judgement']}: {label['cause']}"] += 1
    report = {
        "split": args.split,
        "briefs": len(texts),
        "citations_found": citations_found(args.split, texts),
        "citations": len(results),
        "status": dict(Counter(r.status for r in results)),
        "flagged_hallucinated": len(flagged),
        "by_problem": dict(Counter(r.problems[0] for r in flagged)),
        "hand_judged": dict(judged),
        "false_alarms_per_1000_citations": round(
            1000 * judged["false_alarm"] / len(results), 1
        ),
        "by_cause": dict(causes.most_common()),
        "unlabelled": len(unlabelled),
    }
    if args.unlabelled:
        report["unlabelled_flags"] = [
            [r.citation.brief_id, r.citation.start, r.citation.end, r.problems[0]]
            for r in unlabelled
        ]
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

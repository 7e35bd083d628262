"""Windowed alignment (align_context) against full Biopython (align_full).

Documents of 5k / 50k / 200k characters are cut from concatenated caselaw
opinions; contexts are copied passages of 30-250 characters with Table 2-like
mistranscriptions, plus some invented ones. For each size the script prints
per-context times, the speed-up measured in the same run, and how many cases
give identical spans and scores. The index is built once per document and
amortised over ``--contexts-per-document`` contexts (~10 claims per
document in the paper's setting); every that many contexts start from a
fresh index, so what it makes only when a context first needs it is paid in
their times.

    python bench/bench_align.py            # about 1-2 minutes on 2 cores
    python bench/bench_align.py --quick    # a few seconds
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.align import (  # noqa: E402
    DEFAULT_THRESHOLD,
    DocumentIndex,
    align_context,
    align_full,
)

OPINIONS = ROOT.parent / "shared" / "data" / "caselaw" / "opinions.jsonl"
# (document size, contexts aligned against it); full alignment at 200k takes
# 1-2 s per context, so that size gets few.
FULL_PLAN = ((5_000, 100), (50_000, 60), (200_000, 40))
QUICK_PLAN = ((5_000, 10), (50_000, 4))
INSERTED = ("l'audience", "the", "said", "hearing", "de la", "(sic)")
MONTH = re.compile(
    r"(january|february|march|april|may|june|july|august|september|october"
    r"|november|december)\.? \d{1,2}, \d{4}",
    re.IGNORECASE,
)


def load_opinions() -> list[str]:
    if not OPINIONS.is_file():
        sys.exit(
            f"bench_align: {OPINIONS} not found; it holds the caselaw opinions "
            "(one JSON object per line with a 'text' field) the benchmark needs"
        )
    with OPINIONS.open(encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f if line.strip()]


def make_document(opinions: list[str], size: int, rng: random.Random) -> str:
    order = list(range(len(opinions)))
    rng.shuffle(order)
    parts, total = [], 0
    for i in order:
        parts.append(opinions[i])
        total += len(opinions[i]) + 2
        if total >= size:
            break
    return "\n\n".join(parts)[:size]


def mistranscribe(text: str, rng: random.Random) -> str:
    """One Table 2-like change: case, OCR split, inserted or elided token,
    swapped letters (chambers -> chambres), collapsed whitespace."""
    words = text.split()
    kind = rng.choice(["case", "split", "insert", "elide", "swap", "space"])
    if kind == "case":
        return text.upper() if rng.random() < 0.5 else text.title()
    if kind == "split":
        i = rng.randrange(1, len(text))
        return text[:i] + " " + text[i:]
    if kind == "insert" and len(words) > 2:
        i = rng.randrange(1, len(words))
        return " ".join([*words[:i], rng.choice(INSERTED), *words[i:]])
    if kind == "elide" and len(words) > 5:
        i = rng.randrange(1, len(words) - 2)
        return " ".join(words[:i] + words[i + rng.randint(1, 2) :])
    if kind == "swap" and len(text) > 3:
        i = rng.randrange(0, len(text) - 2)
        return text[:i] + text[i + 1] + text[i] + text[i + 2 :]
    return " ".join(words)


def copied(document: str, rng: random.Random) -> str:
    length = rng.randint(30, 250)
    start = rng.randrange(0, len(document) - length)
    text = document[start : start + length]
    for _ in range(rng.randint(0, 2)):
        text = mistranscribe(text, rng)
    return text


def invented(document: str, others: list[str], rng: random.Random) -> str:
    """Text the document does not hold: another opinion's passage, a real
    passage with its words shuffled, or another passage plus a real date."""
    length = rng.randint(30, 250)
    other = rng.choice(others)
    start = rng.randrange(0, len(other) - length)
    passage = other[start : start + length]
    kind = rng.randrange(3)
    if kind == 0:
        return passage
    if kind == 1:
        at = rng.randrange(0, len(document) - length)
        words = document[at : at + length].split()
        rng.shuffle(words)
        return " ".join(words)
    date = MONTH.search(document)
    return f"{passage[: max(10, length - 20)]} {date.group(0) if date else ''}"


def timed(fn, *args, **kwargs):
    t0 = time.perf_counter()
    result = fn(*args, **kwargs)
    return result, time.perf_counter() - t0


def run_size(
    size: int, count: int, opinions: list[str], per_document: int, seed: int
) -> None:
    rng = random.Random(seed)
    document = make_document(opinions, size, rng)
    others = [o for o in opinions if len(o) > 300 and o[:200] not in document]
    cases = []
    for i in range(count):
        if i % 5 == 4:
            cases.append((invented(document, others, rng), True))
        else:
            cases.append((copied(document, rng), False))

    builds = []
    for _ in range(3):
        index, seconds = timed(DocumentIndex, document)
        builds.append(seconds)
    build = min(builds)

    full_times, fast_times = [], []
    same, differ_low, differ_kept = 0, 0, []
    for i, (context, _) in enumerate(cases):
        if i % per_document == 0:
            # A fresh index per document's worth of contexts: what the index
            # makes only when a context first needs it (the short k-mers) is
            # then paid inside these contexts' times, shared as in use.
            index = DocumentIndex(document)
        full, t_full = timed(align_full, document, context)
        fast, t_fast = timed(align_context, document, context, index=index)
        full_times.append(t_full)
        fast_times.append(t_fast)
        if (full.start, full.end, full.score) == (fast.start, fast.end, fast.score):
            same += 1
        elif max(full.score, fast.score) < DEFAULT_THRESHOLD:
            differ_low += 1
        else:
            differ_kept.append((context, full, fast))

    full_ms = statistics.mean(full_times) * 1e3
    fast_ms = statistics.mean(fast_times) * 1e3
    by_kind = {
        kind: statistics.mean(
            t for t, (_, h) in zip(fast_times, cases, strict=True) if h == kind
        )
        for kind in (False, True)
        if any(h == kind for _, h in cases)
    }
    amortised_ms = fast_ms + build * 1e3 / per_document
    print(
        f"{size:>8,} chars  {len(cases):>3} contexts "
        f"({sum(h for _, h in cases)} invented)\n"
        f"    index build          {build * 1e3:8.2f} ms per document "
        f"({build * 1e3 / per_document:.2f} ms per context over {per_document})\n"
        f"    align_full           {full_ms:8.2f} ms per context\n"
        f"    align_context        {fast_ms:8.2f} ms per context "
        f"(+ index share: {amortised_ms:.2f} ms)\n"
        f"      by kind          "
        + ", ".join(
            f"{'invented' if kind else 'copied'} {t * 1e3:.2f} ms"
            for kind, t in by_kind.items()
        )
        + "\n"
        f"    speed-up             {full_ms / fast_ms:8.1f}x without index, "
        f"{full_ms / amortised_ms:.1f}x with its share\n"
        f"    identical spans+scores {same}/{len(cases)} "
        f"({100 * same / len(cases):.1f}%); differ: {differ_low} both below "
        f"{DEFAULT_THRESHOLD}, {len(differ_kept)} otherwise"
    )
    for context, full, fast in differ_kept:
        print(f"      context {context!r}\n        full {full}\n        fast {fast}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tiny run")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--contexts-per-document", type=int, default=10)
    args = parser.parse_args(argv)
    opinions = load_opinions()
    plan = QUICK_PLAN if args.quick else FULL_PLAN
    print(f"align_context vs align_full, {len(opinions)} opinions, seed {args.seed}")
    for size, count in plan:
        run_size(size, count, opinions, args.contexts_per_document, args.seed + size)


if __name__ == "__main__":
    main()

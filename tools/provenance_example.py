"""Labelled RAG items to try the provenance checker on
(``python -m tools.provenance_example --out DIR`` writes ``DIR/items.jsonl``):
questions about made-up companies, each answered once right (a short span of
its contexts) and once wrong (a sentence naming a city its contexts give for
something else)."""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

CITIES = ["Delhi", "Mumbai", "Paris", "Lyon", "Oslo", "Bergen", "Cairo", "Giza"]


def items(n: int = 24, *, seed: int = 0) -> list[dict]:
    """``2 n`` items, ``r{i}`` supported and ``h{i}`` hallucinated."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        city, other = rng.sample(CITIES, 2)
        contexts = [
            f"Company {i} was founded in {1900 + i} by Anna Berg.",
            f"Its head office is in {city}.",
            f"It opened a shop in {other} in {1960 + i}.",
        ]
        query = f"Where is the head office of Company {i}?"
        out.append(
            {
                "id": f"r{i}",
                "query": query,
                "answer": city,
                "contexts": contexts,
                "label": "supported",
            }
        )
        out.append(
            {
                "id": f"h{i}",
                "query": query,
                "answer": f"Its head office is in {other}.",
                "contexts": contexts,
                "label": "hallucinated",
            }
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder to write")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "items.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in items()), encoding="utf-8")
    print(path)


if __name__ == "__main__":
    main()

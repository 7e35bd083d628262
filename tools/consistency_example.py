"""Free-form answers to try the consistency checker on, with the samples
other models gave and FELM-style labels (``python -m tools.consistency_example
--out DIR`` writes ``DIR/items.jsonl`` and ``DIR/labels.jsonl``): short
biographies of made-up scientists, every other one with a sentence that the
samples contradict."""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

CITIES = ["Oslo", "Lyon", "Cairo", "Porto", "Quito", "Turku"]
FIELDS = ["chemistry", "geology", "botany", "optics"]


def items(n: int = 8, *, seed: int = 0) -> tuple[list[dict], list[dict]]:
    """``n`` items and their labels; item ``i`` is wrong where ``i`` is odd
    (its second sentence names another city than every sample)."""
    rng = random.Random(seed)
    out, labels = [], []
    for i in range(n):
        city, other = rng.sample(CITIES, 2)
        field = rng.choice(FIELDS)
        born = 1900 + 3 * i
        facts = [
            f"Mira Holt {i} was a scientist who worked in {field}.",
            f"She was born in {other if i % 2 else city} in {born}.",
            f"She taught at the university of {city} for thirty years.",
        ]
        samples = [
            f"Mira Holt {i} was born in {city} in {born}. She studied {field}.",
            f"Born in {born} in {city}, Mira Holt {i} became known for {field}.",
            f"Mira Holt {i} worked in {field}. She was born in {city}.",
        ]
        prompt = f"Write a short passage about Mira Holt {i}."
        out.append(
            {
                "id": str(i),
                "prompt": prompt,
                "response": " ".join(facts),
                "samples": samples,
            }
        )
        labels.append(
            {
                "index": str(i),
                "prompt": prompt,
                "response": " ".join(facts),
                "segmented_response": facts,
                "labels": [True, i % 2 == 0, True],
            }
        )
    return out, labels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rows, labels = items()
    for name, lines in (("items.jsonl", rows), ("labels.jsonl", labels)):
        (args.out / name).write_text(
            "".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8"
        )


if __name__ == "__main__":
    main()

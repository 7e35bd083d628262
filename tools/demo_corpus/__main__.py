"""``python -m tools.demo_corpus --out DIR [--docs N] [--seed S] [--styles A,B]``:
write a seeded synthetic ASYLEX-like corpus and print the files' paths as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from . import HELD_OUT_STYLES, STYLES, generate_corpus, write_corpus


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m tools.demo_corpus",
        description="Write a seeded synthetic ASYLEX-like corpus: documents.jsonl, "
        "claims.jsonl, labels.jsonl and schema.json.",
    )
    parser.add_argument("--out", required=True, help="folder to write")
    parser.add_argument("--docs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--styles",
        help="comma-separated document styles, from "
        + ", ".join(STYLES + HELD_OUT_STYLES),
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    styles = args.styles.split(",") if args.styles else None
    try:
        corpus = generate_corpus(docs=args.docs, seed=args.seed, styles=styles)
    except ValueError as e:
        parser.error(str(e))
    paths = write_corpus(corpus, args.out)
    print(json.dumps({name: str(path) for name, path in paths.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A small case-law store and a brief citing it, to try the citation
checker on (``python -m tools.citation_example --out DIR``): two opinions of
one volume (the second bounds the first's pages) with star pages and a
syllabus, one case known only to the index, and a brief whose citations
include each kind of fabrication, with the truth file ``cite-evaluate``
reads."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

DOE_TEXT = (
    "Opinion of the Court. The question is whether the statute reaches private"
    " suits. *12 We hold that the statute does not create a private right of"
    " action. *13 The text says “only the Secretary” may enforce it. *14"
    " Accordingly, the judgment of the Court of Appeals is reversed."
)
OPINIONS = [
    {
        "id": "doe",
        "case_name": "Doe v. Roe",
        "citations": ["5 U.S. 11"],
        "court": "Supreme Court of the United States",
        "date": "1990-01-01",
        "text": DOE_TEXT,
        "pages": [
            {"page": p, "offset": DOE_TEXT.index(f"*{p}")} for p in ("12", "13", "14")
        ],
        "syllabus": "The statute creates no private right of action;"
        " only the Secretary may enforce it.",
    },
    {
        "id": "poe",
        "case_name": "Poe v. Moe",
        "citations": ["5 U.S. 20"],
        "date": "1990-01-15",
        "text": "Opinion. Contracts signed on Sunday are enforceable in this State.",
        "pages": [],
    },
]
INDEX = [
    {"citation": "5 U.S. 30", "case_name": "ZED v. ZOE", "date": "1990-02-01"},
]
# The brief's citations, each with what is wrong with it (None: nothing)
# and whether its case is real but absent from the store.
BRIEF = [
    ("“We hold that the statute does not create a private right of action.”", None),
    ("Doe v. Roe, 5 U.S. 11, 12 (1990).", None),
    ("“We hold that the law does not create a private right of action.”", None),
    ("Doe v. Roe, 5 U.S. 11, 12 (1990).", "quote_not_found"),
    ("See Smith v. Jones, 5 U.S. 11 (1990).", "case_name_mismatch"),
    ("See Doe v. Roe, 5 U.S. 15 (1990).", "no_such_case"),
    ("See Doe v. Roe, 5 U.S. 11, 25 (1990).", "pincite_out_of_range"),
    ("See Zed v. Zoe, 5 U.S. 30 (1990).", "absent"),
    ("See Ames v. Bell, 7 F.3d 9 (9th Cir. 1993).", "absent"),
]


def brief_and_truth() -> tuple[str, list[dict]]:
    """The brief's text and one truth line per citation in it."""
    text, truth = "", []
    for sentence, kind in BRIEF:
        text += (" " if text else "") + sentence
        if sentence.startswith("“"):
            continue
        name = sentence.removeprefix("See ")
        start = len(text) - len(name)
        truth.append(
            {
                "brief_id": "brief-1",
                "start": start,
                "end": len(text) - 1,
                "text": name[:-1],
                "hallucination": None if kind in (None, "absent") else kind,
                "absent": kind == "absent",
            }
        )
    return text, truth


def write_example(out: Path) -> dict[str, Path]:
    """Write the example's files into ``out``; returns their paths by name."""
    out.mkdir(parents=True, exist_ok=True)
    text, truth = brief_and_truth()
    files: dict[str, tuple[Path, Sequence[object]]] = {
        "caselaw": (out / "caselaw.jsonl", OPINIONS),
        "index": (out / "index.jsonl", INDEX),
        "briefs": (out / "briefs.jsonl", [{"id": "brief-1", "text": text}]),
        "truth": (out / "truth.jsonl", truth),
    }
    for path, rows in files.values():
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return {name: path for name, (path, _) in files.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, type=Path)
    for name, path in write_example(parser.parse_args().out).items():
        print(f"{name}: {path}")


if __name__ == "__main__":
    main()

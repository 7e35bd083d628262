"""A small case-law store for the citation tests: two opinions of one
volume (the second bounds the first's pages), one index-only case."""

import json

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
        "text": "Opinion. Contracts signed on Sunday are enforceable in this State.",
        "pages": [],
    },
]
INDEX = [
    {"citation": "5 U.S. 30", "case_name": "ZED v. ZOE", "date": "1990-02-01"},
]


def write_caselaw(folder):
    """The store and index as JSONL files in ``folder``."""
    caselaw = folder / "caselaw.jsonl"
    caselaw.write_text("".join(json.dumps(o) + "\n" for o in OPINIONS))
    index = folder / "index.jsonl"
    index.write_text("".join(json.dumps(o) + "\n" for o in INDEX))
    return caselaw, index

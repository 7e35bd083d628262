"""The sample files each kind's set-up page offers for download
(``python -m tools.setup_samples`` writes them under
``frontend/static/samples/<kind>/``; a test fails when one is stale): small
examples of every upload the page takes, made by the example tools."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tools import citation_example, consistency_example, provenance_example

OUT = Path(__file__).resolve().parents[1] / "frontend" / "static" / "samples"


def _extraction_corpus():
    from tools.demo_corpus import generate_corpus

    return generate_corpus(docs=2, seed=0)


def _extraction_documents() -> list[dict]:
    from pipeline.jsonl import document_to_json

    return [document_to_json(d) for d in _extraction_corpus().documents]


def _extraction_claims() -> list[dict]:
    from pipeline.jsonl import claim_to_json

    return [claim_to_json(c) for c in _extraction_corpus().claims]


def _briefs() -> list[dict]:
    text, _ = citation_example.brief_and_truth()
    return [{"id": "brief-1", "text": text}]


#: kind -> file name -> its rows.
SAMPLES: dict[str, dict[str, Callable[[], list]]] = {
    "extraction": {
        "documents.jsonl": _extraction_documents,
        "claims.jsonl": _extraction_claims,
    },
    "citations": {
        "briefs.jsonl": _briefs,
        "caselaw.jsonl": lambda: citation_example.OPINIONS,
        "index.jsonl": lambda: citation_example.INDEX,
    },
    # Without the example's labels: a sample's answers are for experts to label.
    "provenance": {
        "items.jsonl": lambda: [
            {k: v for k, v in item.items() if k != "label"}
            for item in provenance_example.items(4)
        ]
    },
    "consistency": {"items.jsonl": lambda: consistency_example.items(4)[0]},
}


def sample_text(kind: str, name: str) -> str:
    """A sample file's content: its rows as JSONL."""
    rows = SAMPLES[kind][name]()
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def main() -> None:
    for kind, files in SAMPLES.items():
        (OUT / kind).mkdir(parents=True, exist_ok=True)
        for name in files:
            path = OUT / kind / name
            path.write_text(sample_text(kind, name), encoding="utf-8")
            print(path.relative_to(OUT.parents[2]))


if __name__ == "__main__":
    main()

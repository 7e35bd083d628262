"""The case law both citation benchmarks check against: the stored opinions
and the SCDB U.S. Reports index beside this repository (``../shared``), with
the U.S. Reports volumes the index lists completely."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.checkers.citations import CaseLaw, CitationIndex, Coverage, LocalStore

CASELAW = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "caselaw"
#: The U.S. Reports volumes the index lists completely.
COVERAGE = "U.S.:329-579"


def read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def load_caselaw() -> CaseLaw:
    return CaseLaw(
        [
            LocalStore.read(CASELAW / "opinions.jsonl"),
            CitationIndex.read(CASELAW / "us_citation_index.jsonl"),
        ],
        coverage=Coverage.parse(COVERAGE),
    )

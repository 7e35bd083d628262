"""Exports: a project's documents, claims and labels as the pipeline's
JSONL, readable by ``python -m pipeline`` and importable again.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

from annotator.claims import selectors
from annotator.models import Project
from pipeline.jsonl import write_jsonl_stream

EXPORT_KINDS = ("documents", "claims", "labels")
#: An earlier release's name of an export, still read for one release.
OLD_EXPORT_KINDS = {"predictions": "claims"}


def download_name(name: str) -> str:
    """``name`` (a project's name in it) made safe as a download's file name:
    control characters and line breaks (a CR or LF would end the
    Content-Disposition header), quotes and path separators become "_"."""
    return "".join(
        "_" if c in '"\\/' or (unicodedata.category(c)[0] in "CZ" and c != " ") else c
        for c in name
    )


def project_export(*, project: Project, out_dir: Path) -> dict[str, int]:
    """Write documents.jsonl, claims.jsonl and labels.jsonl to ``out_dir``.

    Claims that were checked are written as checked records (alignment,
    score, verdict); the others as plain claim records.
    """

    out_dir.mkdir(parents=True, exist_ok=True)
    counts = {}
    for kind in EXPORT_KINDS:
        path = out_dir / f"{kind}.jsonl"
        tmp = path.with_suffix(".jsonl.tmp")
        with open(tmp, "w", encoding="utf-8") as out:
            counts[kind] = write_jsonl_stream(
                out, selectors.export_rows(project=project, kind=kind)
            )
        tmp.replace(path)
    return counts

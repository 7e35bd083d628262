"""Reads of claims: the filters the pages and the API share, and export."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.db.models import (
    Exists,
    OuterRef,
    QuerySet,
)

from annotator.claims.records import claim_record, document_record, in_group
from annotator.models import (
    Claim,
    Document,
    Label,
    Project,
    Verdict,
)
from pipeline.checkers import checker_class
from pipeline.jsonl import (
    checked_to_json,
    claim_to_json,
    document_to_json,
    label_to_json,
)
from pipeline.types import Alignment, CheckedClaim
from pipeline.types import Label as LabelRecord

#: The words a page or the API filters verdicts by: each verdict's value,
#: and "unchecked" for the empty one.
VERDICT_FILTERS: dict[str, str] = {(v.value or "unchecked"): v.value for v in Verdict}


def claims_filter(
    queryset: QuerySet[Claim],
    *,
    project: int | None = None,
    document: str | None = None,
    verdict: str | None = None,
    group: str | None = None,
    model: str | None = None,
    min_score: float | None = None,
    max_score: float | None = None,
    labelled: bool | None = None,
) -> QuerySet[Claim]:
    if project is not None:
        queryset = queryset.filter(project_id=project)
    if document:
        queryset = queryset.filter(document__external_id=document)
    if verdict is not None:
        queryset = queryset.filter(verdict=VERDICT_FILTERS[verdict])
    if group:
        queryset = queryset.filter(in_group(group))
    if model:
        queryset = queryset.filter(model=model)
    if min_score is not None:
        queryset = queryset.filter(score__gte=min_score)
    if max_score is not None:
        queryset = queryset.filter(score__lte=max_score)
    if labelled is not None:
        has_label = Exists(Label.objects.filter(claim=OuterRef("pk")))
        queryset = queryset.filter(has_label if labelled else ~has_label)
    return queryset


def _finding_json(p: Claim) -> dict[str, Any]:
    """A checked claim's finding, as every kind stores it: the claim as read,
    the evidence text and items, the scores, the verdict and its reason."""
    return {
        "hypothesis": p.hypothesis,
        "premise": p.premise,
        "evidence": p.evidence,
        "evidence_score": p.evidence_score,
        "score": p.score,
        "verdict": p.verdict,
        "reason": p.reason or None,
        "details": p.details,
    }


def export_rows(*, project: Project, kind: str) -> Iterator[dict[str, Any]]:
    """JSONL records in the pipeline's formats, streamed from the database:
    a checked claim of a kind whose evidence is an alignment in the
    ``check`` command's format, of any other kind as its finding."""

    if kind == "documents":
        for d in Document.objects.filter(project=project).order_by("pk").iterator():
            yield document_to_json(document_record(d, external=True))
    elif kind == "claims":
        rows = (
            Claim.objects.filter(project=project)
            .select_related("document")
            .order_by("pk")
        )
        aligned = checker_class(project.kind).aligns
        for p in rows.iterator(chunk_size=2000):
            claim = claim_record(p, project.kind, external=True)
            if not p.verdict:
                yield claim_to_json(claim)
                continue
            if not aligned:
                yield {**claim_to_json(claim), **_finding_json(p)}
                continue
            # The deciding alignment in the checked format's "align", which
            # the pipeline reads back.
            deciding = p.evidence[0] if p.evidence else {}
            yield checked_to_json(
                CheckedClaim(
                    claim=claim,
                    hypothesis=p.hypothesis,
                    align=Alignment(
                        score=p.evidence_score or 0.0,
                        start=deciding.get("start"),
                        end=deciding.get("end"),
                        text=p.premise,
                    ),
                    score=p.score,
                    verdict=p.verdict,
                    reason=p.reason or None,
                )
            )
    elif kind == "labels":
        rows = (
            Label.objects.filter(claim__project=project, label__in=Label.DECISIVE)
            .select_related("claim", "annotator")
            .order_by("pk")
        )
        for a in rows.iterator(chunk_size=2000):
            extra = dict(a.extra)
            if a.annotator is not None:
                extra["annotator"] = a.annotator.get_username()
            if a.note:
                extra["note"] = a.note
            if a.correction is not None:
                extra["correction"] = a.correction
            if a.suggestion:
                extra["suggestion"] = a.suggestion
            if a.guideline_version is not None:
                extra["guideline_version"] = a.guideline_version
            yield label_to_json(
                LabelRecord(claim_id=a.claim.external_id, label=a.label, extra=extra)
            )
    else:
        raise ValueError(f"unknown export kind {kind!r}")

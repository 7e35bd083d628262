"""Reads and access checks. Views and the API go through these, so "which
projects may this user see" is decided in one place."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.db.models import Exists, OuterRef, QuerySet

from .models import (
    Annotation,
    Document,
    ExtractionRun,
    Prediction,
    Project,
    ScorerModel,
    TrainingRun,
    Verdict,
)


def projects_for(user) -> QuerySet[Project]:
    if not user.is_authenticated:
        return Project.objects.none()
    if user.is_staff:
        return Project.objects.all()
    return Project.objects.filter(members=user)


def project_get(*, user, pk: int) -> Project:
    """The project if ``user`` may see it; DoesNotExist otherwise (a 404, so
    outsiders cannot probe which projects exist)."""
    return projects_for(user).get(pk=pk)


def documents_for(user) -> QuerySet[Document]:
    return Document.objects.filter(project__in=projects_for(user))


def predictions_for(user) -> QuerySet[Prediction]:
    return Prediction.objects.filter(project__in=projects_for(user))


def annotations_for(user) -> QuerySet[Annotation]:
    return Annotation.objects.filter(prediction__project__in=projects_for(user))


def extraction_runs_for(user) -> QuerySet[ExtractionRun]:
    return ExtractionRun.objects.filter(project__in=projects_for(user))


def scorer_models_for(user) -> QuerySet[ScorerModel]:
    return ScorerModel.objects.filter(project__in=projects_for(user))


def training_runs_for(user) -> QuerySet[TrainingRun]:
    return TrainingRun.objects.filter(project__in=projects_for(user))


def predictions_filter(
    queryset: QuerySet[Prediction],
    *,
    project: int | None = None,
    document: str | None = None,
    verdict: str | None = None,
    type: str | None = None,
    model: str | None = None,
    min_score: float | None = None,
    max_score: float | None = None,
    labelled: bool | None = None,
) -> QuerySet[Prediction]:
    if project is not None:
        queryset = queryset.filter(project_id=project)
    if document:
        queryset = queryset.filter(document__external_id=document)
    if verdict is not None:
        queryset = queryset.filter(
            verdict=Verdict.UNCHECKED if verdict == "unchecked" else verdict
        )
    if type:
        queryset = queryset.filter(type=type)
    if model:
        queryset = queryset.filter(model=model)
    if min_score is not None:
        queryset = queryset.filter(score__gte=min_score)
    if max_score is not None:
        queryset = queryset.filter(score__lte=max_score)
    if labelled is not None:
        has_label = Exists(Annotation.objects.filter(prediction=OuterRef("pk")))
        queryset = queryset.filter(has_label if labelled else ~has_label)
    return queryset


def export_rows(*, project: Project, kind: str) -> Iterator[dict[str, Any]]:
    """JSONL records in the pipeline's formats, streamed from the database."""
    from pipeline.jsonl import (
        checked_to_json,
        document_to_json,
        label_to_json,
        prediction_to_json,
    )
    from pipeline.types import Alignment, CheckedPrediction, Label
    from pipeline.types import Document as PDocument
    from pipeline.types import Prediction as PPrediction

    if kind == "documents":
        for d in Document.objects.filter(project=project).order_by("pk").iterator():
            yield document_to_json(
                PDocument(id=d.external_id, text=d.text, metadata=d.metadata)
            )
    elif kind == "predictions":
        rows = (
            Prediction.objects.filter(project=project)
            .select_related("document")
            .order_by("pk")
        )
        for p in rows.iterator(chunk_size=2000):
            prediction = PPrediction(
                id=p.external_id,
                document_id=p.document.external_id,
                type=p.type,
                value=p.value,
                context=p.context,
                model=p.model or None,
                extra={**p.extra, **({"kind": p.kind} if p.kind != "entity" else {})},
            )
            if not p.verdict:
                yield prediction_to_json(prediction)
                continue
            yield checked_to_json(
                CheckedPrediction(
                    prediction=prediction,
                    hypothesis=p.hypothesis,
                    align=Alignment(
                        score=p.align_score or 0.0,
                        start=p.align_start,
                        end=p.align_end,
                        text=p.align_text,
                    ),
                    nli_score=p.score,
                    verdict=p.verdict,
                    reason=p.reason or None,
                )
            )
    elif kind == "labels":
        rows = (
            Annotation.objects.filter(
                prediction__project=project, label__in=["safe", "unsafe"]
            )
            .select_related("prediction", "annotator")
            .order_by("pk")
        )
        for a in rows.iterator(chunk_size=2000):
            extra = dict(a.extra)
            if a.annotator is not None:
                extra["annotator"] = a.annotator.get_username()
            if a.note:
                extra["note"] = a.note
            if a.corrected_type:
                extra["corrected_type"] = a.corrected_type
            if a.corrected_value is not None:
                extra["corrected_value"] = a.corrected_value
            yield label_to_json(
                Label(
                    prediction_id=a.prediction.external_id, label=a.label, extra=extra
                )
            )
    else:
        raise ValueError(f"unknown export kind {kind!r}")

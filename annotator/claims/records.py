"""One conversion between database rows and the pipeline's records.

The check and training name rows by database id (stable, never reused);
exports and extraction by the ids users gave them (``external``), which is
what the pipeline's JSONL carries. A claim's own fields (``data``) are its
kind's: its checker's ``claim_data`` turns them into the record and back.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from django.db.models import Expression, Q, Value
from django.db.models.fields.json import KeyTextTransform

from annotator.kinds import kind_hook
from annotator.models import Claim, Document, Project
from pipeline.checkers import checker_class, kinds
from pipeline.types import Claim as ClaimRecord
from pipeline.types import Document as DocumentRecord


def document_record(document: Document, *, external: bool = False) -> DocumentRecord:
    """The document as the pipeline reads it, metadata included: a RAG item's
    document keeps its query and its contexts' offsets there."""

    return DocumentRecord(
        id=document.external_id if external else str(document.pk),
        text=document.text,
        metadata=document.metadata,
    )


def claim_record(claim: Claim, kind: str, *, external: bool = False) -> ClaimRecord:
    """The claim of a ``kind`` project as the pipeline reads it. With
    ``external`` ids its document must be loaded (``select_related
    ("document")``), and its extra fields come along, as in an export."""

    if external:
        ids = (claim.external_id, claim.document.external_id)
    else:
        ids = (str(claim.pk), str(claim.document_id))
    record = checker_class(kind).claim_data.claim(*ids, claim.data)
    return replace(
        record, model=claim.model or None, extra={**claim.extra, **record.extra}
    )


def claim_fields(record: ClaimRecord, kind: str) -> dict[str, Any]:
    """The row fields of a ``kind`` claim record: its kind's own fields as
    ``data`` (checked: a :class:`ValueError` names what is wrong), its other
    fields as ``extra``, its source model."""
    spec = checker_class(kind).claim_data
    data = spec.of(record)
    if problem := spec.problem(data):
        raise ValueError(f"claim {record.id!r}: {kind} claim data {problem}")
    return {
        "data": data,
        "extra": {k: v for k, v in record.extra.items() if k not in data},
        "model": record.model or "",
    }


def claim_display(project: Project) -> Callable[[ClaimRecord], dict[str, str]]:
    """How the project's kind names a claim on the labeling page (its hook's
    ``claim_display``): by default its type, its value as text, and the
    statement of its claim data as the hypothesis."""
    hook = kind_hook(project.kind)
    if hook.claim_display is not None:
        return hook.claim_display(project)
    spec = checker_class(project.kind).claim_data

    def display(claim: ClaimRecord) -> dict[str, str]:
        value = claim.value
        return {
            "type_display": claim.type,
            "value_display": value
            if isinstance(value, str)
            else json.dumps(value, ensure_ascii=False),
            "hypothesis": spec.statement(spec.of(claim)),
        }

    return display


def claim_statement(
    project: Project, display: Callable[[ClaimRecord], dict[str, str]] | None = None
) -> Callable[[str, Any], str]:
    """What a project's claim states, from its stored hypothesis and its
    data, in its kind's words: the hypothesis once checked, else as the
    labeling page names it (``display``, the project's ``claim_display``,
    passed where the caller has it already)."""
    display = display or claim_display(project)
    spec = checker_class(project.kind).claim_data

    def statement(hypothesis: str, data: Any) -> str:
        if hypothesis or data is None:
            return hypothesis
        return display(spec.claim("", "", data))["hypothesis"]

    return statement


def claim_group(kind: str, data: str = "data") -> Expression:
    """A ``kind`` claim's group (its ``ClaimData.group`` field, as text), for
    a query whose claim data is at ``data``; one group of all where the kind
    has none."""
    group = checker_class(kind).claim_data.group
    return KeyTextTransform(group, data) if group else Value("")


def record_group(record: ClaimRecord, kind: str) -> str:
    """The group of a ``kind`` claim record, as :func:`claim_group` reads it
    from its row."""
    spec = checker_class(kind).claim_data
    return str(spec.of(record)[spec.group]) if spec.group else ""


def in_group(group: str) -> Q:
    """Claims whose group is ``group``, of any kind that groups its claims."""
    match = Q(pk__in=[])
    for kind in kinds():
        key = checker_class(kind).claim_data.group
        if key:
            match |= Q(project__kind=kind, **{f"data__{key}": group})
    return match

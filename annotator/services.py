"""Writes. Every function is ``<noun>_<verb>(*, ...)``, commits in units (a batch
of lines, one document, one batch of checks) and enqueues follow-up tasks only
on commit, so a worker never sees a row that was rolled back.

The pipeline is imported inside the functions that use it: the web process
never loads torch or openai.
"""

from __future__ import annotations

import io
import json
import logging
import math
import os
import random
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import IO, Any

from django.conf import settings
from django.db import (
    DatabaseError,
    IntegrityError,
    InterfaceError,
    OperationalError,
    connection,
    transaction,
)
from django.db.models import F
from django.db.models.functions import Abs
from django.utils import timezone

from . import allowlists
from .dispatch import send_after_commit
from .models import (
    ACTIVE_RUN_STATUSES,
    Annotation,
    Document,
    ExtractionItem,
    ExtractionRun,
    LabelReceipt,
    Lease,
    Prediction,
    PredictionScore,
    Project,
    Reason,
    RunStatus,
    ScorerModel,
    Verdict,
)

logger = logging.getLogger(__name__)

IMPORT_BATCH_SIZE = 500
ProgressCallback = Callable[[int, int], None]


class ApplicationError(Exception):
    """An error the caller can act on; the API maps it to 400."""


class ConfigurationError(ApplicationError):
    """A project or deployment setting makes the work impossible (permanent)."""


class TransientError(ApplicationError):
    """The work may succeed later (network, rate limit); tasks retry it."""


@dataclass
class LineError:
    line: int | None
    message: str
    source: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"source": self.source, "line": self.line, "message": self.message}


@dataclass
class ImportReport:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    errors: list[LineError] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "created": self.created,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "errors": [e.as_dict() for e in self.errors],
        }


# --- reading uploads ---------------------------------------------------------


def batched(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    """Lists of ``size`` items (the last one shorter); itertools has it from
    Python 3.12."""
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _document_problem(text: str) -> str | None:
    if not text.strip():
        return "document is empty"
    if "\x00" in text:
        return "document contains a NUL character"
    size = len(text.encode("utf-8"))
    if size > settings.MAX_DOCUMENT_BYTES:
        return (
            f"document is {size} bytes, over the limit of "
            f"{settings.MAX_DOCUMENT_BYTES} (MAX_DOCUMENT_BYTES)"
        )
    return None


def _max_lengths(**fields: tuple[type, str]) -> dict[str, int]:
    """Record attribute -> the max_length of the column it is stored in."""
    return {
        attr: model._meta.get_field(name).max_length
        for attr, (model, name) in fields.items()
    }


def _length_problem(record: Any, limits: dict[str, int]) -> str | None:
    for attr, limit in limits.items():
        value = getattr(record, attr) or ""
        if len(value) > limit:
            return (
                f"field {attr!r} is {len(value)} characters, over the limit of {limit}"
            )
    return None


def _parsed_records(
    stream: IO[bytes],
    source: str,
    parse: Callable[[Any], Any],
    report: ImportReport,
    *,
    limits: dict[str, int],
) -> Iterator[tuple[int, Any]]:
    """The records of a JSONL stream with their line numbers; every line that
    does not parse, or would not fit its columns, is reported instead, and so
    is a file without a single record."""
    from pipeline.errors import InputError
    from pipeline.jsonl import iter_jsonl_stream

    empty = True
    for number, value in iter_jsonl_stream(stream, source):
        empty = False
        if isinstance(value, InputError):
            # The message without the "source:line: " prefix: LineError has both.
            message = str(value).removeprefix(f"{source}:{number}: ")
            report.errors.append(LineError(number, message, source))
            continue
        try:
            record = parse(value)
        except ValueError as e:
            report.errors.append(LineError(number, str(e), source))
            continue
        problem = _length_problem(record, limits)
        if problem:
            report.errors.append(LineError(number, problem, source))
            continue
        yield number, record
    if empty:
        report.errors.append(LineError(None, "the file has no records", source))


def _upsert_batch(
    upsert: Callable[[list[Any]], Any],
    batch: list[Any],
    *,
    report: ImportReport,
    line_of: Callable[[Any], tuple[int | None, str]],
) -> None:
    """``upsert(batch)`` in one savepoint; if the database refuses it (a value
    no check foresaw), each record in a savepoint of its own, so that a bad
    record costs only its own line, reported with its number."""
    before = (report.created, report.updated, report.unchanged, len(report.errors))
    try:
        with transaction.atomic():
            upsert(batch)
        return
    except _REFUSALS as e:
        _raise_if_connection_lost(e)
        logger.warning("import batch refused, retrying line by line: %s", e)
        # Forget what the refused batch counted; its records are counted again.
        report.created, report.updated, report.unchanged = before[:3]
        del report.errors[before[3] :]
    for record in batch:
        try:
            with transaction.atomic():
                upsert([record])
        except _REFUSALS as e:
            _raise_if_connection_lost(e)
            line, source = line_of(record)
            message = f"refused by the database: {describe_refusal(e)}"
            report.errors.append(LineError(line, message, source))


# What the database (or the driver, encoding a lone surrogate) refuses.
_REFUSALS = (DatabaseError, UnicodeEncodeError)


def _raise_if_connection_lost(e: Exception) -> None:
    # A lost connection refuses every record alike: that is no bad line, and
    # the caller (task retry, API 503) should try the whole import again.
    if isinstance(e, (OperationalError, InterfaceError)) and (
        connection.connection is None or not connection.is_usable()
    ):
        raise e


def describe_refusal(e: Exception) -> str:
    """The database's reason for refusing a value, without the SQL (which
    would echo the whole row back): its first line and its detail line."""
    if isinstance(e, UnicodeEncodeError):
        return "text that is not valid Unicode (a lone surrogate)"
    lines = str(e).strip().splitlines()
    reason = lines[0] if lines else type(e).__name__
    diag = getattr(e.__cause__, "diag", None)
    detail = getattr(diag, "message_detail", None)
    return f"{reason} ({detail})" if detail else reason


# --- documents ---------------------------------------------------------------


def documents_import(
    *,
    project: Project,
    files: Iterable[tuple[str, IO[bytes]]],
    progress: ProgressCallback | None = None,
) -> ImportReport:
    """Upsert documents from ``(filename, binary stream)`` pairs.

    ``.jsonl`` files hold one document record a line; any other file is one
    plain-text document whose id is the file name without its extension.
    A bad line or file is reported and skipped; the rest still go in, one
    transaction per batch so nothing is half-written.
    """
    from pipeline.jsonl import document_from_json

    report = ImportReport()

    def parse(obj: Any) -> Any:
        document = document_from_json(obj)
        problem = _document_problem(document.text)
        if problem:
            raise ValueError(f"document {document.id!r}: {problem}")
        return document

    limits = _max_lengths(id=(Document, "external_id"))

    def gather() -> Iterator[tuple[str, int | None, Any]]:
        for name, stream in files:
            if name.lower().endswith(".jsonl"):
                records = _parsed_records(stream, name, parse, report, limits=limits)
                for number, document in records:
                    yield name, number, document
            else:
                document = _text_document(name, stream, report)
                if document is not None:
                    yield name, None, document

    done = 0
    for batch in batched(gather(), IMPORT_BATCH_SIZE):
        _upsert_batch(
            lambda records: _documents_upsert(
                project=project, records=records, report=report
            ),
            batch,
            report=report,
            line_of=lambda record: (record[1], record[0]),
        )
        done += len(batch)
        if progress:
            progress(done, 0)
    if report.created or report.updated:
        _enqueue_check(project.pk)
    return report


def _text_document(name: str, stream: IO[bytes], report: ImportReport):
    from pipeline.types import Document as PDocument

    raw = stream.read(settings.MAX_DOCUMENT_BYTES + 1)
    try:
        text = raw.decode("utf-8-sig")  # without a byte-order mark (Windows)
    except UnicodeDecodeError as e:
        report.errors.append(LineError(None, f"not UTF-8 (byte {e.start})", name))
        return None
    if len(raw) > settings.MAX_DOCUMENT_BYTES:
        problem = (
            f"document is over the limit of {settings.MAX_DOCUMENT_BYTES} bytes "
            "(MAX_DOCUMENT_BYTES)"
        )
    else:
        problem = _document_problem(text)
    if problem:
        report.errors.append(LineError(None, problem, name))
        return None
    return PDocument(id=Path(name).stem or name, text=text, metadata={"filename": name})


def _documents_upsert(*, project: Project, records, report: ImportReport) -> None:
    # Last occurrence wins inside a batch, as it would across batches.
    latest = {document.id: document for _, _, document in records}
    with transaction.atomic():
        existing = {
            d.external_id: d
            for d in Document.objects.select_for_update().filter(
                project=project, external_id__in=latest
            )
        }
        new, changed, text_changed = [], [], []
        for external_id, document in latest.items():
            row = existing.get(external_id)
            if row is None:
                new.append(
                    Document(
                        project=project,
                        external_id=external_id,
                        text=document.text,
                        metadata=document.metadata,
                    )
                )
            elif row.text != document.text or row.metadata != document.metadata:
                if row.text != document.text:
                    text_changed.append(row.pk)
                row.text, row.metadata = document.text, document.metadata
                row.updated_at = timezone.now()  # bulk_update skips auto_now
                changed.append(row)
            else:
                report.unchanged += 1
        # ON CONFLICT: a concurrent import of the same new id updates instead
        # of failing the whole batch on the unique constraint.
        Document.objects.bulk_create(
            new,
            update_conflicts=True,
            unique_fields=["project", "external_id"],
            update_fields=["text", "metadata", "updated_at"],
        )
        Document.objects.bulk_update(changed, ["text", "metadata", "updated_at"])
        if text_changed:
            # Their alignments point into the old text.
            _predictions_reset(Prediction.objects.filter(document_id__in=text_changed))
        report.created += len(new)
        report.updated += len(changed)


_CHECK_FIELDS = dict(
    hypothesis="",
    align_start=None,
    align_end=None,
    align_text="",
    align_score=None,
    score=None,
    uncertainty=None,
    scored_by="",
    verdict=Verdict.UNCHECKED,
    reason=Reason.NONE,
    checked_at=None,
    pipeline_version="",
)


def _predictions_reset(queryset) -> int:
    """Forget verdicts that no longer hold (their document or claim changed)."""
    return queryset.update(**_CHECK_FIELDS, updated_at=timezone.now())


def _predictions_recheck(queryset) -> int:
    """Ask for a new check but keep the verdicts until it replaces them (a new
    scorer, a forced rerun): ``checked_at`` empty is what the check looks for."""
    return queryset.update(checked_at=None, updated_at=timezone.now())


# --- predictions -------------------------------------------------------------


def predictions_import(
    *,
    project: Project,
    stream: IO[bytes],
    source: str = "predictions.jsonl",
    source_run: ExtractionRun | None = None,
    progress: ProgressCallback | None = None,
) -> ImportReport:
    """Upsert predictions from JSONL (the pipeline's prediction records).

    A changed prediction loses its verdict and is checked again; an unchanged
    one keeps it. The check is enqueued once, after the last batch commits.
    """
    from pipeline.jsonl import prediction_from_json

    report = ImportReport()
    done = 0
    limits = _max_lengths(
        id=(Prediction, "external_id"),
        document_id=(Document, "external_id"),
        type=(Prediction, "type"),
        model=(Prediction, "model"),
    )
    records = _parsed_records(
        stream, source, prediction_from_json, report, limits=limits
    )
    for batch in batched(records, IMPORT_BATCH_SIZE):
        _upsert_batch(
            lambda records: _predictions_upsert(
                project=project,
                records=records,
                report=report,
                source=source,
                source_run=source_run,
            ),
            batch,
            report=report,
            line_of=lambda record: (record[0], source),
        )
        done += len(batch)
        if progress:
            progress(done, 0)
    if report.created or report.updated:
        _enqueue_check(project.pk)
    return report


_PREDICTION_FIELDS = ("document_id", "model", "type", "value", "context", "extra")


def _predictions_upsert(
    *,
    project: Project,
    records: list[tuple[int | None, Any]],
    report: ImportReport,
    source: str,
    source_run: ExtractionRun | None,
) -> list[Prediction]:
    latest = {p.id: (number, p) for number, p in records}
    document_ids = {
        d.external_id: d.pk
        for d in Document.objects.filter(
            project=project, external_id__in={p.document_id for _, p in latest.values()}
        ).only("pk", "external_id")
    }
    with transaction.atomic():
        existing = {
            p.external_id: p
            for p in Prediction.objects.select_for_update().filter(
                project=project, external_id__in=latest
            )
        }
        new, changed, rows = [], [], []
        for external_id, (number, p) in latest.items():
            document_pk = document_ids.get(p.document_id)
            if document_pk is None:
                report.errors.append(
                    LineError(
                        number,
                        f"prediction {p.id!r}: unknown document_id {p.document_id!r} "
                        "(import the documents first)",
                        source,
                    )
                )
                continue
            fields: dict[str, Any] = dict(
                document_id=document_pk,
                model=p.model or "",
                type=p.type,
                value=p.value,
                context=p.context,
                extra=p.extra,
            )
            row = existing.get(external_id)
            if row is None:
                row = Prediction(
                    project=project,
                    external_id=external_id,
                    source_run=source_run,
                    **fields,
                )
                new.append(row)
            elif any(getattr(row, k) != v for k, v in fields.items()):
                for k, v in {**fields, **_CHECK_FIELDS}.items():
                    setattr(row, k, v)
                row.updated_at = timezone.now()  # bulk_update skips auto_now
                changed.append(row)
            else:
                report.unchanged += 1
            rows.append(row)
        Prediction.objects.bulk_create(
            new,
            update_conflicts=True,
            unique_fields=["project", "external_id"],
            update_fields=[*_PREDICTION_FIELDS, *_CHECK_FIELDS, "updated_at"],
        )
        if changed:
            Prediction.objects.bulk_update(
                changed, [*_PREDICTION_FIELDS, *_CHECK_FIELDS, "updated_at"]
            )
        report.created += len(new)
        report.updated += len(changed)
    return rows


# --- labels ------------------------------------------------------------------


def labels_import(
    *, project: Project, stream: IO[bytes], source: str = "labels.jsonl"
) -> ImportReport:
    """Upsert expert labels from JSONL (``prediction_id``, ``label``, extras).

    Imported labels have no annotator account; re-importing a file updates
    them (one imported label per prediction).
    """
    from pipeline.jsonl import label_from_json

    def parse(obj: Any) -> Any:
        label = label_from_json(obj)
        note = label.extra.get("note")
        if note is not None and not isinstance(note, str):
            raise ValueError("field 'note' must be a string")
        if note and len(note) > LABEL_NOTE_MAX_CHARS:
            raise ValueError(
                f"field 'note' is {len(note)} characters, over the limit of "
                f"{LABEL_NOTE_MAX_CHARS}"
            )
        return label

    report = ImportReport()
    limits = _max_lengths(prediction_id=(Prediction, "external_id"))
    records = _parsed_records(stream, source, parse, report, limits=limits)
    for batch in batched(records, IMPORT_BATCH_SIZE):
        _upsert_batch(
            lambda records: _labels_upsert(
                project=project, records=records, report=report, source=source
            ),
            batch,
            report=report,
            line_of=lambda record: (record[0], source),
        )
    return report


def _labels_upsert(*, project: Project, records, report: ImportReport, source: str):
    latest = {label.prediction_id: (number, label) for number, label in records}
    with transaction.atomic():
        predictions = {
            p.external_id: p.pk
            for p in Prediction.objects.filter(
                project=project, external_id__in=latest
            ).only("pk", "external_id")
        }
        existing = {
            a.prediction_id: a
            for a in Annotation.objects.select_for_update().filter(
                prediction_id__in=predictions.values(),
                source=Annotation.Source.IMPORT,
            )
        }
        new, changed = [], []
        for prediction_id, (number, label) in latest.items():
            pk = predictions.get(prediction_id)
            if pk is None:
                report.errors.append(
                    LineError(
                        number, f"unknown prediction_id {prediction_id!r}", source
                    )
                )
                continue
            extra = dict(label.extra)
            note = str(extra.pop("note", "") or "")
            row = existing.get(pk)
            if row is None:
                new.append(
                    Annotation(
                        prediction_id=pk,
                        source=Annotation.Source.IMPORT,
                        label=label.label,
                        note=note,
                        extra=extra,
                    )
                )
            elif (row.label, row.note, row.extra) != (label.label, note, extra):
                row.label, row.note, row.extra = label.label, note, extra
                row.updated_at = timezone.now()
                changed.append(row)
            else:
                report.unchanged += 1
        Annotation.objects.bulk_create(new)
        if changed:
            Annotation.objects.bulk_update(
                changed, ["label", "note", "extra", "updated_at"]
            )
        report.created += len(new)
        report.updated += len(changed)


LABEL_NOTE_MAX_CHARS = 10_000
LABEL_VALUE_MAX_CHARS = 10_000  # a corrected value, written as JSON
LABEL_VALUE_MAX_DEPTH = 20
LABELS_BATCH_MAX = 500


class LabelInvalid(ApplicationError):
    """A label that cannot be stored as sent."""


class LabelConflict(ApplicationError):
    """The client_id was used for another label (of another expert, or of
    another prediction). The message says nothing about that label."""


def _json_problem(value: Any) -> str | None:
    from pipeline.jsonl import value_problem

    problem = value_problem(value, max_depth=LABEL_VALUE_MAX_DEPTH)
    if problem:
        return problem
    size = len(json.dumps(value, ensure_ascii=False))
    if size > LABEL_VALUE_MAX_CHARS:
        return f"{size} characters as JSON, over the limit of {LABEL_VALUE_MAX_CHARS}"
    return None


def _label_values(**values) -> dict[str, Any]:
    """The label's fields, once checked; LabelInvalid if one cannot be stored."""
    problem = _label_problem(**values)
    if problem:
        raise LabelInvalid(problem)
    return values


def _label_problem(
    *, label, corrected_type, corrected_value, note, seconds_spent
) -> str | None:
    """Why a label cannot be stored, checked before any write. The API's
    serializers check shapes; this is the last check before the database."""
    from pipeline.jsonl import text_problem

    if label not in Annotation.Label.values:
        return f"label: one of {', '.join(Annotation.Label.values)}"
    type_max = Annotation._meta.get_field("corrected_type").max_length
    for name, text, limit in (
        ("note", note, LABEL_NOTE_MAX_CHARS),
        ("corrected_type", corrected_type, type_max),
    ):
        if not isinstance(text, str):
            return f"{name}: must be text"
        if len(text) > limit:
            return f"{name}: {len(text)} characters, over the limit of {limit}"
        problem = text_problem(text)
        if problem:
            return f"{name}: {problem}"
    problem = _json_problem(corrected_value)
    if problem:
        return f"corrected_value: {problem}"
    if seconds_spent is not None and (
        isinstance(seconds_spent, bool)
        or not isinstance(seconds_spent, (int, float))
        or not math.isfinite(seconds_spent)
        or seconds_spent < 0
    ):
        return "seconds_spent: a number of seconds, 0 or more"
    return None


def _client_uuid(client_id: Any) -> uuid.UUID | None:
    if client_id is None or isinstance(client_id, uuid.UUID):
        return client_id
    try:
        return uuid.UUID(str(client_id))
    except ValueError:
        raise LabelInvalid("client_id: must be a UUID") from None


def _receipt_seen(client_id: uuid.UUID, *, prediction: Prediction, annotator) -> bool:
    """Whether ``client_id`` was processed before for this expert's label of
    ``prediction``. LabelConflict if it was used for any other label."""
    receipt = (
        LabelReceipt.objects.filter(pk=client_id)
        .values_list("annotator_id", "prediction_id")
        .first()
    )
    if receipt is None:
        return False
    if receipt != (annotator.pk, prediction.pk):
        raise LabelConflict("client_id already used")
    return True


def _annotation_save(
    *, prediction: Prediction, annotator, client_id: uuid.UUID | None, values
) -> tuple[Annotation | None, str]:
    with transaction.atomic():
        if client_id is not None and _receipt_seen(
            client_id, prediction=prediction, annotator=annotator
        ):
            # A retry, or a stale resend of a label since changed or undone:
            # never written over the expert's later decision.
            current = Annotation.objects.filter(
                prediction=prediction, annotator=annotator
            ).first()
            return current, "duplicate"
        # By hand rather than update_or_create, whose nested savepoints
        # cost a round trip each on the labeling page's hottest write.
        annotation = (
            Annotation.objects.select_for_update()
            .filter(prediction=prediction, annotator=annotator)
            .first()
        )
        created = annotation is None
        if annotation is None:
            annotation = Annotation.objects.create(
                prediction=prediction,
                annotator=annotator,
                client_id=client_id,
                source=Annotation.Source.UI,
                **values,
            )
        else:
            # A relabel takes the new client_id (undo names the label by it);
            # the old one keeps its receipt.
            values = {**values, "client_id": client_id, "source": Annotation.Source.UI}
            for name, value in values.items():
                setattr(annotation, name, value)
            annotation.save(update_fields=[*values, "updated_at"])
        if client_id is not None:
            LabelReceipt.objects.create(
                client_id=client_id, annotator=annotator, prediction=prediction
            )
    return annotation, "created" if created else "updated"


def annotation_submit(
    *,
    prediction: Prediction,
    annotator,
    label: str,
    corrected_type: str = "",
    corrected_value: Any = None,
    note: str = "",
    seconds_spent: float | None = None,
    client_id=None,
) -> tuple[Annotation | None, str]:
    """Save an expert's label; a relabel of the prediction updates it in place.

    Returns the expert's label of the prediction and what happened: created,
    updated, or duplicate: the client_id was processed before (a retry, or a
    stale resend of a label since changed or undone) and nothing changed; the
    label returned is then the current one, None once undone. Every client_id
    processed keeps a LabelReceipt.

    Raises LabelInvalid for a label that cannot be stored, LabelConflict for a
    client_id used for another label.
    """
    save = dict(
        prediction=prediction,
        annotator=annotator,
        client_id=_client_uuid(client_id),
        values=_label_values(
            label=label,
            corrected_type=corrected_type,
            corrected_value=corrected_value,
            note=note,
            seconds_spent=seconds_spent,
        ),
    )
    try:
        return _annotation_save(**save)
    except IntegrityError:
        # A concurrent copy of the same save, or the expert's first label of
        # the prediction from another tab, committed between our look and our
        # write; a second look sees it (READ COMMITTED).
        pass
    try:
        return _annotation_save(**save)
    except IntegrityError as e:
        # Still taken: a label of a deleted user (no receipt) holds it.
        raise LabelConflict("client_id already used") from e


def annotation_change(
    *,
    annotation: Annotation,
    label: str,
    corrected_type: str = "",
    corrected_value: Any = None,
    note: str = "",
    seconds_spent: float | None = None,
    client_id=None,
) -> tuple[Annotation | None, str]:
    """Change a stored label in place (the API's PUT and PATCH).

    A new client_id makes it a new decision, as in ``annotation_submit``. None,
    or the label's own client_id (a client sending back what it read), keeps
    the label's client_id: no receipt names the change, and it is never taken
    for a resend of the label.
    """
    values = _label_values(
        label=label,
        corrected_type=corrected_type,
        corrected_value=corrected_value,
        note=note,
        seconds_spent=seconds_spent,
    )
    client_id = _client_uuid(client_id)
    if client_id is not None and client_id != annotation.client_id:
        return annotation_submit(
            prediction=annotation.prediction,
            annotator=annotation.annotator,
            client_id=client_id,
            **values,
        )
    with transaction.atomic():
        row = Annotation.objects.select_for_update().filter(pk=annotation.pk).first()
        if row is None:
            raise LabelInvalid("the label was deleted meanwhile")
        for name, value in values.items():
            setattr(row, name, value)
        row.save(update_fields=[*values, "updated_at"])
    return row, "updated"


# --- labeling queue ----------------------------------------------------------


def queue_keys_refresh(*, project: Project) -> None:
    """Recompute Prediction.uncertainty if the active threshold has moved.

    Every hand-out calls this first, so a threshold changed by any path (a
    scorer activated, edited or deleted, the project edited in the admin)
    reorders the queue without each of them having to remember to.
    """
    from . import selectors

    threshold = selectors.active_threshold(project)
    if project.uncertainty_threshold == threshold:
        return
    with transaction.atomic():
        # Claimed by updating the project row: a concurrent hand-out blocks on
        # it, then finds the threshold already current and skips the work.
        claimed = (
            Project.objects.filter(pk=project.pk)
            .exclude(uncertainty_threshold=threshold)
            .update(uncertainty_threshold=threshold)
        )
        if claimed:
            # Waits for rows a running check holds, then recomputes them too.
            Prediction.objects.filter(project=project).update(
                uncertainty=Abs(F("score") - threshold)
            )
    project.uncertainty_threshold = threshold


def _commit_without_waiting_for_disk(cursor) -> None:
    # Leases are disposable: one lost in a crash only returns its prediction
    # to the pool early. Not waiting for the WAL flush at commit saves the
    # hand-out its slowest step (tens of ms on a busy disk); the transaction
    # stays atomic and consistent, only its durability is relaxed.
    cursor.execute("SET LOCAL synchronous_commit TO OFF")


def _queue_candidates(
    *, project: Project, annotator, now, exclude: set[int], n: int
) -> list[int]:
    """Lock up to ``n`` available predictions, the gold slice's share of them
    drawn from the gold documents in random order, the rest in the project's
    queue order; each side fills in for the other when it runs dry."""
    from . import selectors

    n_gold = sum(random.random() < project.gold_share for _ in range(n))
    taken: list[int] = []
    for gold, want in ((True, n_gold), (False, n - n_gold), (True, n)):
        want = min(want, n - len(taken))
        if want <= 0:
            continue
        ids = list(
            selectors.queue_candidates(
                project=project,
                annotator=annotator,
                now=now,
                exclude=exclude | set(taken),
                gold=gold,
            ).values_list("pk", flat=True)[:want]
        )
        taken += ids
    return taken


def labeling_next(
    *, project: Project, annotator, count: int, exclude: Iterable[int] = ()
) -> list[int]:
    """Lease up to ``count`` predictions to ``annotator``; their ids, in order.

    The expert's own live leases come first (a reload resumes where they
    were), then new predictions in the project's queue order. ``exclude``
    names predictions the page already holds or has labels for in its outbox.
    """
    from . import selectors

    queue_keys_refresh(project=project)
    now = timezone.now()
    expires = now + timedelta(seconds=settings.LABEL_LEASE_SECONDS)
    exclude = set(exclude)
    with transaction.atomic(), connection.cursor() as cursor:
        _commit_without_waiting_for_disk(cursor)

        def lease(ids: list[int]) -> list[int]:
            return _leases_take(
                cursor,
                ids,
                project=project,
                annotator=annotator,
                now=now,
                expires=expires,
            )

        held = list(
            selectors.queue_held(
                project=project, annotator=annotator, now=now, exclude=exclude
            ).values_list("prediction_id", flat=True)[:count]
        )
        leased = lease(held)
        seen = exclude | set(held)
        # A second round only when a concurrent hand-out took rows between
        # our snapshot and our lock.
        for _ in range(2):
            wanted = count - len(leased)
            if wanted <= 0:
                break
            locked = _queue_candidates(
                project=project, annotator=annotator, now=now, exclude=seen, n=wanted
            )
            if not locked:
                break
            seen.update(locked)
            leased += lease(locked)
    return leased


def _leases_take(
    cursor, ids: list[int], *, project: Project, annotator, now, expires
) -> list[int]:
    """Lease those of ``ids`` still available, in order.

    The candidates' snapshot predates their locks: a row a competitor leased
    and committed after it was taken but before we reached it passed the
    filter. We hold the row locks now, so any competing lease on them is
    committed, and this new statement sees it. Held leases are renewed.
    """
    from . import selectors

    if not ids:
        return []
    condition, params = selectors.available_sql(
        "p", project=project, annotator=annotator, now=now
    )
    cursor.execute(
        f"""
        INSERT INTO {Lease._meta.db_table}
            (prediction_id, annotator_id, expires_at, created_at)
        SELECT p.id, %s, %s, %s
        FROM unnest(%s::bigint[]) AS w(id)
            JOIN {Prediction._meta.db_table} p ON p.id = w.id
        WHERE {condition}
        ON CONFLICT (prediction_id, annotator_id)
            DO UPDATE SET expires_at = EXCLUDED.expires_at
        RETURNING prediction_id""",
        [annotator.pk, expires, now, ids, *params],
    )
    leased = {row[0] for row in cursor.fetchall()}
    return [pk for pk in ids if pk in leased]


@dataclass
class LabelResult:
    client_id: str
    status: str  # created | updated | duplicate | error
    id: int | None = None
    prediction: int | None = None
    error: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "client_id": self.client_id,
            "status": self.status,
            "id": self.id,
            "prediction": self.prediction,
            "error": self.error,
        }


def _labelable_prediction(project: Project, pk: Any) -> Prediction | None:
    # An id out of bigint's range would be a database error, not a miss.
    if isinstance(pk, bool) or not isinstance(pk, int) or not 0 < pk < 2**63:
        return None
    return Prediction.objects.filter(project=project, pk=pk).first()


def labels_submit(
    *, project: Project, annotator, labels: list[dict[str, Any]]
) -> list[LabelResult]:
    """Save a batch of labels from the labeling page's outbox, in order.

    Each label is its own transaction and gets its own result: one bad label
    (a prediction deleted meanwhile, a note too long) is reported and the rest
    still go in. A label whose client_id was processed before is a retry, or a
    stale resend, and comes back as ``duplicate`` without changing anything.
    """
    results = []
    for data in labels:
        client_id = str(data["client_id"])
        # Another project's prediction is as missing as one never imported.
        prediction = _labelable_prediction(project, data["prediction"])
        if prediction is None:
            results.append(LabelResult(client_id, "error", error="no such prediction"))
            continue
        try:
            with transaction.atomic():
                annotation, status = annotation_submit(
                    prediction=prediction,
                    annotator=annotator,
                    label=data["label"],
                    corrected_type=data.get("corrected_type") or "",
                    corrected_value=data.get("corrected_value"),
                    note=data.get("note") or "",
                    seconds_spent=data.get("seconds_spent"),
                    client_id=client_id,
                )
                if status != "duplicate":
                    # Not for a duplicate: the expert may hold the prediction
                    # again since (leased back by an undo).
                    Lease.objects.filter(
                        prediction=prediction, annotator=annotator
                    ).delete()
        except ApplicationError as e:
            results.append(LabelResult(client_id, "error", error=str(e)))
            continue
        results.append(
            LabelResult(
                client_id,
                status,
                id=annotation.pk if annotation is not None else None,
                prediction=prediction.pk,
            )
        )
    return results


def label_undo(*, project: Project, annotator, client_id: str) -> int | None:
    """Delete the expert's label saved under ``client_id``; safe to repeat.

    The prediction is leased back to the expert, who is about to label it
    again. Returns its id, or None when there was nothing to delete (already
    undone, or replaced by a later label of the same prediction). The label's
    receipt stays: a late resend of the undone label is a duplicate, and does
    not bring it back.
    """
    with transaction.atomic():
        annotation = (
            Annotation.objects.select_for_update()
            .filter(
                client_id=client_id,
                annotator=annotator,
                prediction__project=project,
            )
            .first()
        )
        if annotation is None:
            return None
        prediction_id = annotation.prediction_id
        annotation.delete()
        Lease.objects.update_or_create(
            prediction_id=prediction_id,
            annotator=annotator,
            defaults={
                "expires_at": timezone.now()
                + timedelta(seconds=settings.LABEL_LEASE_SECONDS)
            },
        )
    return prediction_id


# --- export ------------------------------------------------------------------


EXPORT_KINDS = ("documents", "predictions", "labels")


def project_export(*, project: Project, out_dir: Path) -> dict[str, int]:
    """Write documents.jsonl, predictions.jsonl and labels.jsonl to ``out_dir``.

    Predictions that were checked are written as checked records (alignment,
    score, verdict); the others as plain prediction records.
    """
    from pipeline.jsonl import write_jsonl_stream

    from . import selectors

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


# --- checking: alignment, scoring, verdicts ----------------------------------


@dataclass
class CheckSummary:
    checked: int = 0
    safe: int = 0
    unsafe: int = 0
    errors: list[str] = field(default_factory=list)
    scorer: str = ""


_scorer_lock = threading.Lock()
_scorer_cache: dict[str, Any] = {}


def _scorer_load(path: str, *, threshold: float | None):
    """One scorer per worker process: loading a cross-encoder takes seconds."""
    key = f"{path}@{threshold}"
    with _scorer_lock:
        if key not in _scorer_cache:
            from pipeline.score import NLIScorer

            scorer = NLIScorer(path, threshold=threshold)
            _scorer_cache.clear()
            _scorer_cache[key] = scorer
        return _scorer_cache[key]


def _project_scorer(project: Project) -> tuple[Any, str]:
    """The active scorer of the project, else DEFAULT_SCORER, else none."""
    active = ScorerModel.objects.filter(project=project, is_active=True).first()
    if active is not None:
        return _scorer_load(active.path, threshold=active.threshold), active.version
    if settings.DEFAULT_SCORER:
        scorer = _scorer_load(settings.DEFAULT_SCORER, threshold=project.nli_threshold)
        return scorer, "default"
    return None, ""


def project_schema(project: Project):
    """The project's entity schema, None when it has none.

    Raises:
        ConfigurationError: the stored schema does not parse.
    """
    if not project.entity_schema:
        return None
    from pipeline.errors import SchemaError
    from pipeline.schema import schema_from_dict

    try:
        return schema_from_dict(project.entity_schema)
    except SchemaError as e:
        raise ConfigurationError(f"project {project.name!r}: {e}") from e


def predictions_check(
    *,
    project_id: int,
    force: bool = False,
    progress: ProgressCallback | None = None,
) -> CheckSummary:
    """Align, score and judge the project's unchecked predictions.

    Only predictions not yet checked (``checked_at`` empty) are computed (all
    of them when ``force``, keeping their verdicts until replaced), so running
    it twice does nothing the second time. Each batch
    is claimed with ``FOR UPDATE SKIP LOCKED`` and committed on its own: two
    workers on the same project split the work instead of repeating it.
    """
    import pipeline
    from pipeline.checkers import checker_class
    from pipeline.types import Document as PDocument
    from pipeline.types import Prediction as PPrediction

    from . import selectors

    project = Project.objects.get(pk=project_id)
    schema = project_schema(project)
    scorer, scorer_version = _project_scorer(project)
    summary = CheckSummary(scorer=getattr(scorer, "name", "") if scorer else "")
    version = getattr(pipeline, "__version__", "")
    if force:
        _predictions_recheck(Prediction.objects.filter(project=project))
    total = Prediction.objects.filter(project=project, checked_at=None).count()
    while True:
        with transaction.atomic():
            batch = list(
                Prediction.objects.select_for_update(skip_locked=True, of=("self",))
                .filter(project=project, checked_at=None)
                .select_related("document")
                .order_by("pk")[: settings.CHECK_BATCH_SIZE]
            )
            if not batch:
                break
            by_id = {str(p.pk): p for p in batch}
            documents = {
                str(p.document_id): PDocument(
                    id=str(p.document_id), text=p.document.text
                )
                for p in batch
            }
            # TODO(#9): claims and evidence of every kind, not only the
            # extraction checker's predictions and aligned spans.
            checker = checker_class(project.kind)(
                documents, schema=schema, align_threshold=project.align_threshold
            )
            report = checker.check(
                [
                    PPrediction(
                        id=str(p.pk),
                        document_id=str(p.document_id),
                        type=p.type,
                        value=p.value,
                        context=p.context,
                        model=p.model or None,
                    )
                    for p in batch
                ],
                scorer=scorer,
            )
            now = timezone.now()
            # Read after scoring (which takes seconds), so a threshold change
            # that a hand-out has already applied is not undone with a stale
            # one; a later change recomputes these rows (queue_keys_refresh).
            threshold = selectors.active_threshold(project)
            rows, scores = [], []
            for f in report.findings:
                row = by_id[f.claim_id]
                [span] = f.evidence  # the aligned context
                row.hypothesis = f.claim
                row.align_start, row.align_end = span.start, span.end
                row.align_text, row.align_score = span.text, span.score
                row.score = f.score
                row.uncertainty = None if f.score is None else abs(f.score - threshold)
                row.scored_by = summary.scorer if f.score is not None else ""
                row.verdict, row.reason = f.verdict, f.reason or Reason.NONE
                row.checked_at, row.pipeline_version = now, version
                row.updated_at = now
                rows.append(row)
                if f.score is not None:
                    scores.append(
                        PredictionScore(
                            prediction=row,
                            scorer=summary.scorer,
                            scorer_version=scorer_version,
                            score=f.score,
                        )
                    )
                summary.safe += f.verdict == Verdict.SAFE
                summary.unsafe += f.verdict == Verdict.UNSAFE
            Prediction.objects.bulk_update(
                rows, [*_CHECK_FIELDS, "updated_at"], batch_size=500
            )
            PredictionScore.objects.bulk_create(
                scores,
                update_conflicts=True,
                unique_fields=["prediction", "scorer", "scorer_version"],
                update_fields=["score", "updated_at"],
            )
            summary.checked += len(rows)
            summary.errors.extend(str(e) for e in report.errors)
            if len(rows) < len(batch):
                # Should not happen (every prediction has its document); stop
                # rather than claim the same rows forever.
                logger.error("check left %d predictions", len(batch) - len(rows))
                break
        if progress:
            progress(summary.checked, total)
    return summary


def predictions_check_queue(*, project: Project, force: bool = False) -> int:
    """Have the workers check the project's unchecked predictions (every one
    when ``force``, keeping verdicts until replaced). The rows record what is
    left before the message is sent, so a lost message is found by the sweep.
    Returns how many predictions wait for the check."""
    with transaction.atomic():
        if force:
            _predictions_recheck(Prediction.objects.filter(project=project))
        _enqueue_check(project.pk)
    return Prediction.objects.filter(project=project, checked_at=None).count()


def _enqueue_check(project_id: int) -> None:
    from . import tasks

    send_after_commit(tasks.check_predictions, project_id)


# --- extraction --------------------------------------------------------------


def extraction_run_start(
    *,
    project: Project,
    model: str,
    params: dict[str, Any] | None = None,
    document_ids: Iterable[int] | None = None,
    created_by=None,
) -> ExtractionRun:
    """Create a run over the given documents (all of the project's by default)."""
    if project.llm_models and model not in project.llm_models:
        raise ApplicationError(
            f"model {model!r} is not one of the project's models {project.llm_models}"
        )
    if not project.llm_base_url:
        raise ApplicationError(f"project {project.name!r} has no LLM base_url")
    documents = Document.objects.filter(project=project)
    if document_ids is not None:
        documents = documents.filter(pk__in=list(document_ids))
    with transaction.atomic():
        run = ExtractionRun.objects.create(
            project=project, model=model, params=params or {}, created_by=created_by
        )
        ExtractionItem.objects.bulk_create(
            ExtractionItem(run=run, document_id=pk)
            for pk in documents.values_list("pk", flat=True)
        )
        run.progress_total = run.items.count()
        run.save(update_fields=["progress_total"])
        from . import tasks

        send_after_commit(tasks.run_extraction, run.pk)
    return run


def llm_config(run: ExtractionRun):
    from pipeline.llm import LLMConfig

    project = run.project
    # Rows written before the allow-lists, or the lists narrowed since: no
    # request leaves the server for an endpoint or key the deployment refuses.
    problem = allowlists.llm_base_url_problem(
        project.llm_base_url
    ) or allowlists.llm_api_key_env_problem(project.llm_api_key_env)
    if problem:
        raise ConfigurationError(f"project {project.name!r}: {problem}")
    api_key = None
    if project.llm_api_key_env:
        api_key = os.environ.get(project.llm_api_key_env)
        if not api_key:
            raise ConfigurationError(
                f"environment variable {project.llm_api_key_env} is not set on the "
                "worker (the project's llm_api_key_env)"
            )
    params = dict(run.params)
    for key in ("price_per_mtok_prompt", "price_per_mtok_completion"):
        params.pop(key, None)
    known = {"timeout", "max_retries", "temperature", "json_mode"}
    try:
        return LLMConfig(
            base_url=project.llm_base_url,
            model=run.model,
            api_key=api_key,
            **{k: v for k, v in params.items() if k in known},
            extra={k: v for k, v in params.items() if k not in known},
        )
    except (TypeError, ValueError) as e:
        raise ConfigurationError(f"run {run.pk}: bad LLM settings: {e}") from e


def _is_transient(error: Exception) -> bool:
    # Only HTTP-level failures (pipeline.llm.LLMError carries status_code) are
    # worth retrying; a malformed extraction would fail the same way again.
    if not hasattr(error, "status_code"):
        return False
    status = error.status_code
    return status is None or status in (408, 409, 429) or status >= 500


def _cost(run: ExtractionRun) -> Decimal | None:
    prompt = run.params.get("price_per_mtok_prompt")
    completion = run.params.get("price_per_mtok_completion")
    if prompt is None and completion is None:
        return None
    cost = (
        Decimal(str(prompt or 0)) * run.prompt_tokens
        + Decimal(str(completion or 0)) * run.completion_tokens
    ) / Decimal(1_000_000)
    return cost.quantize(Decimal("0.000001"))


def extraction_run_fail(*, run_id: int, error: str) -> None:
    """Record a permanent failure on the run (its task will not retry)."""
    ExtractionRun.objects.filter(pk=run_id).update(
        status=RunStatus.FAILED, error=error, finished_at=timezone.now()
    )


def extraction_run_execute(*, run_id: int) -> ExtractionRun:
    """Extract every pending document of a run, one transaction per document.

    Safe to run twice or after a crash: only items still pending are done.
    A document the LLM cannot handle is recorded on its item and the run goes
    on; a transient failure (network, 429, 5xx after the SDK's own retries)
    raises TransientError with the item still pending, for the task to retry.
    A configuration problem fails the whole run.
    """
    from pipeline.errors import PipelineError
    from pipeline.extract import extract_document
    from pipeline.llm import make_client
    from pipeline.types import Document as PDocument

    run = ExtractionRun.objects.select_related("project").get(pk=run_id)
    if run.status in (RunStatus.SUCCEEDED, RunStatus.FAILED):
        return run
    ExtractionRun.objects.filter(pk=run_id, status=RunStatus.PENDING).update(
        status=RunStatus.RUNNING, started_at=timezone.now()
    )
    ExtractionRun.objects.filter(pk=run_id).update(heartbeat_at=timezone.now())
    try:
        config = llm_config(run)
        schema = project_schema(run.project)
        if schema is None:
            raise ConfigurationError(
                f"project {run.project.name!r} has no entity schema to extract"
            )
    except ConfigurationError as e:
        extraction_run_fail(run_id=run_id, error=str(e))
        raise
    client = make_client(config)
    while True:
        # The row lock is held for the LLM call of one document: a second
        # worker on the same run skips to the next document, and a crash
        # releases the lock with the item still pending.
        with transaction.atomic():
            item = (
                ExtractionItem.objects.select_for_update(skip_locked=True)
                .filter(run_id=run_id, status=RunStatus.PENDING)
                .select_related("document")
                .order_by("pk")
                .first()
            )
            if item is None:
                break
            document = item.document
            try:
                result = extract_document(
                    client,
                    config,
                    PDocument(
                        id=document.external_id,
                        text=document.text,
                        metadata=document.metadata,
                    ),
                    schema,
                )
            except PipelineError as e:
                if _is_transient(e):
                    raise TransientError(f"document {document.external_id}: {e}") from e
                item.status, item.error = RunStatus.FAILED, str(e)
                item.save(update_fields=["status", "error", "updated_at"])
                _run_add_usage(run_id, getattr(e, "usage", None), done=1)
                continue
            _extraction_item_save(run=run, item=item, result=result)
    return _run_finish(run_id)


def _extraction_item_save(*, run: ExtractionRun, item: ExtractionItem, result) -> None:
    if result.error:
        item.status, item.error = RunStatus.FAILED, str(result.error)
    else:
        item.status = RunStatus.SUCCEEDED
        report = ImportReport()
        document_key = item.document.external_id
        # The pipeline's ids ("{document}:{model}:{n}") make re-extracting a
        # document with the same model update its predictions, not add more.
        records = [
            (None, p if p.id else _with_id(p, f"{document_key}:{run.model}:{i}"))
            for i, p in enumerate(result.predictions)
        ]
        rows = _predictions_upsert(
            project=run.project,
            records=records,
            report=report,
            source=f"run {run.pk}",
            source_run=run,
        )
        if report.errors:
            item.error = "; ".join(e.message for e in report.errors)
        item.prediction_count = len(rows)
    item.save(update_fields=["status", "error", "prediction_count", "updated_at"])
    _run_add_usage(run.pk, result.usage, done=1)


def _with_id(p, new_id: str):
    from dataclasses import replace

    return replace(p, id=new_id)


def _run_add_usage(run_id: int, usage, *, done: int) -> None:
    from django.db.models import F

    ExtractionRun.objects.filter(pk=run_id).update(
        heartbeat_at=timezone.now(),
        progress_done=F("progress_done") + done,
        prompt_tokens=F("prompt_tokens") + int(getattr(usage, "prompt_tokens", 0) or 0),
        completion_tokens=F("completion_tokens")
        + int(getattr(usage, "completion_tokens", 0) or 0),
    )


def _run_finish(run_id: int) -> ExtractionRun:
    with transaction.atomic():
        run = ExtractionRun.objects.select_for_update().get(pk=run_id)
        if run.status != RunStatus.RUNNING:
            return run
        if run.items.filter(status__in=ACTIVE_RUN_STATUSES).exists():
            return run  # another worker still holds a document
        items = run.items.all()
        failed = items.filter(status=RunStatus.FAILED).count()
        run.status = (
            RunStatus.FAILED
            if failed and failed == items.count()
            else RunStatus.SUCCEEDED
        )
        if failed:
            run.error = f"{failed} of {items.count()} documents failed"
        run.cost_estimate = _cost(run)
        run.finished_at = timezone.now()
        run.save(update_fields=["status", "error", "cost_estimate", "finished_at"])
        _enqueue_check(run.project_id)
    return run


def stream_of(text: str) -> IO[bytes]:
    """A binary stream over ``text`` (tests and small API payloads)."""
    return io.BytesIO(text.encode("utf-8"))


# --- scorers -----------------------------------------------------------------


def scorer_problem(scorer: ScorerModel) -> str | None:
    """Why workers could not load ``scorer``: outside the allow-list, or not a
    model folder. A hub name the deployment lists passes (it loads where the
    hub is reachable)."""
    from pipeline.score import model_folder_problem, resolve_model

    problem = allowlists.scorer_source_problem(scorer.path)
    if problem:
        return problem
    local = Path(resolve_model(scorer.path))
    if local.is_absolute() or local.exists():
        return model_folder_problem(local)
    return None


def scorer_activate(*, scorer: ScorerModel, recheck: bool = True) -> ScorerModel:
    """Make ``scorer`` the project's active one; verdicts are recomputed with it.

    A scorer that fails validation changes nothing. The old verdicts stay
    (and keep the labeling queue ordered) until the check rescores each row.

    Raises:
        ApplicationError: the scorer's folder is missing or broken.
    """
    problem = scorer_problem(scorer)
    if problem:
        raise ApplicationError(
            f"scorer {scorer.version} cannot be activated: {problem}; the "
            "active scorer is unchanged"
        )
    with transaction.atomic():
        # Serialises concurrent activations; the partial unique constraint
        # would otherwise turn the loser into an IntegrityError.
        list(
            ScorerModel.objects.select_for_update()
            .filter(project=scorer.project_id)
            .values_list("pk", flat=True)
        )
        ScorerModel.objects.filter(project=scorer.project_id, is_active=True).exclude(
            pk=scorer.pk
        ).update(is_active=False)
        scorer.is_active = True
        scorer.save(update_fields=["is_active"])
        if recheck:
            _predictions_recheck(Prediction.objects.filter(project=scorer.project_id))
            _enqueue_check(scorer.project_id)
    return scorer

"""Imports: documents, claims and labels from uploads and files.

A bad line or file is reported with its number and skipped; the rest goes
in, one transaction per batch, and the check is enqueued once the rows are
committed. The pipeline parses the lines (``pipeline.jsonl``).
"""

from __future__ import annotations

import enum
import io
import json
import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from django.conf import settings
from django.db import (
    DatabaseError,
    InterfaceError,
    OperationalError,
    connection,
    models,
    transaction,
)
from django.utils import timezone

from annotator.claims import pdfs, tabular
from annotator.claims.checking import (
    CHECK_FIELDS,
    ProgressCallback,
    check_enqueue,
    claims_refind,
    claims_reset,
)
from annotator.claims.records import claim_fields
from annotator.labeling.labels import LABEL_NOTE_MAX_CHARS
from annotator.models import (
    Claim,
    Document,
    Label,
    LLMRun,
    Project,
)
from pipeline.checkers import item_format
from pipeline.errors import InputError
from pipeline.jsonl import (
    claim_from_json,
    document_from_json,
    iter_jsonl_stream,
    label_from_json,
)
from pipeline.types import Document as PDocument

logger = logging.getLogger(__name__)


IMPORT_BATCH_SIZE = 500
#: The longest type a claim record may have (an entity type is a short name;
#: its column held 200 before claims kept their fields in ``data``).
CLAIM_TYPE_MAX_CHARS = 200


@dataclass
class LineError:
    line: int | None
    message: str
    source: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"source": self.source, "line": self.line, "message": self.message}


class Outcome(enum.Enum):
    """How much of an input was used. The import endpoints answer and the
    management commands exit by it, as ``python -m pipeline`` does."""

    COMPLETE = "every record used"
    PARTIAL = "some records skipped, the others used"
    REFUSED = "nothing used"

    @classmethod
    def of(cls, *, used: int, skipped: int) -> Outcome:
        if not skipped:
            return cls.COMPLETE
        return cls.PARTIAL if used else cls.REFUSED


@dataclass
class ImportReport:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    errors: list[LineError] = field(default_factory=list)

    @property
    def outcome(self) -> Outcome:
        # A record already stored as sent (unchanged) was used: importing the
        # same file again is not a failure.
        return Outcome.of(
            used=self.created + self.updated + self.unchanged,
            skipped=len(self.errors),
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "created": self.created,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "errors": [e.as_dict() for e in self.errors],
        }


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


def _max_lengths(**fields: tuple[type[models.Model], str]) -> dict[str, int]:
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


def parsed_records(
    stream: IO[bytes],
    source: str,
    parse: Callable[[Any], Any],
    report: ImportReport,
    *,
    limits: dict[str, int],
    csv_layout: tabular.Layout | None = None,
) -> Iterator[tuple[int, Any]]:
    """The records of a JSONL stream (or, given ``csv_layout``, of a file named
    .csv) with their line numbers; every line that does not parse, or would
    not fit its columns, is reported instead, and so is a file without a
    single record."""

    if csv_layout is not None and tabular.is_csv(source):
        rows = tabular.csv_rows(stream, source, csv_layout)
    else:
        rows = iter_jsonl_stream(stream, source)
    empty = True
    for number, value in rows:
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


def project_items(project: Project):
    """How the project's checker reads its JSONL items
    (``pipeline.checkers.item_format``: each line a document and the claims
    it brings), None when it takes documents and claims apart."""

    return item_format(project.kind)


def takes_items(project: Project) -> bool:
    """Whether the project's JSONL documents are items (a RAG answer with
    its contexts, a response with its prompt and samples)."""
    return project_items(project) is not None


@dataclass(frozen=True)
class _ParsedItem:
    """An item line as its checker reads it, with the document it makes."""

    item: Any
    document: Any

    @property
    def id(self) -> str:
        return self.document.id


def documents_import(
    *,
    project: Project,
    files: Iterable[tuple[str, IO[bytes]]],
    progress: ProgressCallback | None = None,
) -> ImportReport:
    """Upsert documents from ``(filename, binary stream)`` pairs.

    ``.jsonl`` files hold one document record a line, ``.csv`` files one a
    row (``id,text`` columns); any other file is one plain-text document
    whose id is the file name without its extension, and so is a PDF (named
    .pdf or starting with ``%PDF-``), its page table in its metadata
    (``annotator.claims.pdfs``). In a project that
    ``takes_items``, a ``.jsonl`` file holds items instead, one a line, read
    as its checker's ``item_format`` says and counted by item
    (``_items_upsert``).
    A bad line or file is reported and skipped; the rest still go in, one
    transaction per batch so nothing is half-written.
    """

    report = ImportReport()

    def parse(obj: Any) -> Any:
        document = document_from_json(obj)
        problem = _document_problem(document.text)
        if problem:
            raise ValueError(f"document {document.id!r}: {problem}")
        return document

    # An item's id is its document's and its claim's: both columns are as long.
    limits = _max_lengths(id=(Document, "external_id"))
    items = project_items(project)

    def gather() -> Iterator[tuple[str, int | None, Any]]:
        for name, stream in files:
            if items is not None and name.lower().endswith(".jsonl"):
                records = parsed_records(
                    stream,
                    name,
                    lambda obj: _item_parse(items, obj),
                    report,
                    limits=limits,
                )
                for number, item in records:
                    yield name, number, item
            elif name.lower().endswith((".jsonl", ".csv")):
                records = parsed_records(
                    stream,
                    name,
                    parse,
                    report,
                    limits=limits,
                    csv_layout=tabular.DOCUMENTS,
                )
                for number, document in records:
                    yield name, number, document
            else:
                document = _text_document(name, stream, report, pdf=items is None)
                if document is not None:
                    yield name, None, document

    def upsert(records: list[tuple[str, int | None, Any]]) -> None:
        documents = [r for r in records if not isinstance(r[2], _ParsedItem)]
        if documents:
            _documents_upsert(project=project, records=documents, report=report)
        if len(documents) < len(records):
            parsed = [r for r in records if isinstance(r[2], _ParsedItem)]
            _items_upsert(project=project, records=parsed, report=report, form=items)

    done = 0
    for batch in batched(gather(), IMPORT_BATCH_SIZE):
        _upsert_batch(
            upsert,
            batch,
            report=report,
            line_of=lambda record: (record[1], record[0]),
        )
        done += len(batch)
        if progress:
            progress(done, 0)
    if report.created or report.updated:
        check_enqueue(project.pk)
    return report


def _text_document(name: str, stream: IO[bytes], report: ImportReport, *, pdf: bool):
    """A plain-text file's document, or a PDF's where ``pdf`` (a project
    whose documents are items takes none)."""

    raw = stream.read(settings.MAX_DOCUMENT_BYTES + 1)
    problem: str | None
    if pdfs.is_pdf(name, raw):
        if not pdf:
            problem = "a PDF is one document; this project's uploads are items (JSONL)"
            report.errors.append(LineError(None, problem, name))
            return None
        return _pdf_document(name, raw, stream, report)
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


def _pdf_document(name: str, head: bytes, rest: IO[bytes], report: ImportReport):
    try:
        document = pdfs.pdf_file_document(name, head, rest)
    except InputError as e:
        report.errors.append(LineError(None, str(e), name))
        return None
    problem = _document_problem(document.text)
    if problem:
        report.errors.append(LineError(None, f"the PDF's text: {problem}", name))
        return None
    return document


def _documents_upsert(
    *, project: Project, records, report: ImportReport, metadata_checked: bool = False
) -> None:
    """``metadata_checked``: the check reads the documents' metadata too (a
    RAG item's query), so a change there, as one of the text, resets their
    claims' verdicts."""
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
                if row.text != document.text or metadata_checked:
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
            claims_reset(Claim.objects.filter(document_id__in=text_changed))
            claims_refind(project, text_changed)
        report.created += len(new)
        report.updated += len(changed)


def _item_parse(form, obj: Any) -> _ParsedItem:
    item = form.read(obj)
    document = form.document(item)
    problem = _document_problem(document.text) or _metadata_problem(document)
    if problem:
        raise ValueError(f"item {document.id!r}: {problem}")
    return _ParsedItem(item, document)


def _metadata_problem(document) -> str | None:
    # An item's metadata may be most of it (a response's samples): bounded
    # as its text is.
    size = len(json.dumps(document.metadata, ensure_ascii=False).encode("utf-8"))
    if size > settings.MAX_DOCUMENT_BYTES:
        return (
            f"its fields besides the text are {size} bytes, over the limit of "
            f"{settings.MAX_DOCUMENT_BYTES} (MAX_DOCUMENT_BYTES)"
        )
    return None


def _items_upsert(*, project: Project, records, report: ImportReport, form) -> None:
    """Items: each its document (external id the item's id) and the claims
    and labels it brings (``form``, the checker's ``item_format``: a RAG
    item's answer as its claim under the same id, a benchmark's label as an
    imported label, ``Label.Source.IMPORT``, as ``labels_import``
    stores a labels file's; a response brings neither, the check finds its
    blocks). An item sent again without a label keeps the one stored.
    Counted by item: created with its document, updated when its document,
    claim or label changed."""
    latest = {parsed.id: (name, number, parsed) for name, number, parsed in records}
    before = _item_states(project, latest)
    parts = ImportReport()  # counts by row; the items are counted below
    _documents_upsert(
        project=project,
        records=[(n, line, p.document) for n, line, p in latest.values()],
        report=parts,
        metadata_checked=True,
    )
    for name in dict.fromkeys(n for n, _, _ in latest.values()):
        mine = [(line, p.item) for n, line, p in latest.values() if n == name]
        claims = [(line, c) for line, item in mine for c in form.claims(item)]
        if claims:
            claims_upsert(
                project=project,
                records=claims,
                report=parts,
                source=name,
                source_run=None,
            )
        labels = [(line, label) for line, item in mine for label in form.labels(item)]
        if labels:
            _labels_upsert(project=project, records=labels, report=parts, source=name)
    report.errors.extend(parts.errors)
    after = _item_states(project, latest)
    for item_id in latest:
        if before.get(item_id) is None:
            report.created += 1
        elif before[item_id] != after.get(item_id):
            report.updated += 1
        else:
            report.unchanged += 1


def _item_states(project: Project, ids) -> dict[str, tuple]:
    """What each item's rows hold (document, claim, imported label), to say
    whether an import changed them."""
    documents = {
        external_id: (text, metadata)
        for external_id, text, metadata in Document.objects.filter(
            project=project, external_id__in=ids
        ).values_list("external_id", "text", "metadata")
    }
    claims = {
        row[0]: row[1:]
        for row in Claim.objects.filter(
            project=project, external_id__in=ids
        ).values_list("external_id", "document__external_id", "data", "extra")
    }
    labels = dict(
        Label.objects.filter(
            claim__project=project,
            claim__external_id__in=ids,
            source=Label.Source.IMPORT,
        ).values_list("claim__external_id", "label")
    )
    return {
        i: (documents[i], claims.get(i), labels.get(i)) for i in ids if i in documents
    }


def claims_import(
    *,
    project: Project,
    stream: IO[bytes],
    source: str = "claims.jsonl",
    source_run: LLMRun | None = None,
    progress: ProgressCallback | None = None,
) -> ImportReport:
    """Upsert claims from JSONL (the pipeline's claim records), or
    from CSV when ``source`` is named .csv (``tabular.CLAIMS`` columns).

    A changed claim loses its verdict and is checked again; an unchanged
    one keeps it. The check is enqueued once, after the last batch commits.
    """

    report = ImportReport()
    done = 0
    limits = _max_lengths(
        id=(Claim, "external_id"),
        document_id=(Document, "external_id"),
        model=(Claim, "model"),
    )
    limits["type"] = CLAIM_TYPE_MAX_CHARS
    records = parsed_records(
        stream,
        source,
        claim_from_json,
        report,
        limits=limits,
        csv_layout=tabular.CLAIMS,
    )
    for batch in batched(records, IMPORT_BATCH_SIZE):
        _upsert_batch(
            lambda records: claims_upsert(
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
        check_enqueue(project.pk)
    return report


_CLAIM_FIELDS = ("document_id", "model", "data", "extra")


def claims_upsert(
    *,
    project: Project,
    records: list[tuple[int | None, Any]],
    report: ImportReport,
    source: str,
    source_run: LLMRun | None,
) -> list[Claim]:
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
            for p in Claim.objects.select_for_update().filter(
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
                        f"claim {p.id!r}: unknown document_id {p.document_id!r} "
                        "(import the documents first)",
                        source,
                    )
                )
                continue
            try:
                fields = {"document_id": document_pk, **claim_fields(p, project.kind)}
            except ValueError as e:
                report.errors.append(LineError(number, str(e), source))
                continue
            row = existing.get(external_id)
            if row is None:
                row = Claim(
                    project=project,
                    external_id=external_id,
                    source_run_type=source_run._meta.label_lower if source_run else "",
                    source_run_id=source_run.pk if source_run else None,
                    **fields,
                )
                new.append(row)
            elif any(getattr(row, k) != v for k, v in fields.items()):
                for k, v in {**fields, **CHECK_FIELDS}.items():
                    setattr(row, k, v)
                row.updated_at = timezone.now()  # bulk_update skips auto_now
                changed.append(row)
            else:
                report.unchanged += 1
            rows.append(row)
        Claim.objects.bulk_create(
            new,
            update_conflicts=True,
            unique_fields=["project", "external_id"],
            update_fields=[*_CLAIM_FIELDS, *CHECK_FIELDS, "updated_at"],
        )
        if changed:
            Claim.objects.bulk_update(
                changed, [*_CLAIM_FIELDS, *CHECK_FIELDS, "updated_at"]
            )
        report.created += len(new)
        report.updated += len(changed)
    return rows


def labels_import(
    *, project: Project, stream: IO[bytes], source: str = "labels.jsonl"
) -> ImportReport:
    """Upsert expert labels from JSONL (``claim_id``, ``label``, extras).

    Imported labels have no annotator account; re-importing a file updates
    them (one imported label per claim).
    """

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
    limits = _max_lengths(claim_id=(Claim, "external_id"))
    records = parsed_records(stream, source, parse, report, limits=limits)
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
    latest = {label.claim_id: (number, label) for number, label in records}
    with transaction.atomic():
        claims = {
            p.external_id: p.pk
            for p in Claim.objects.filter(project=project, external_id__in=latest).only(
                "pk", "external_id"
            )
        }
        existing = {
            a.claim_id: a
            for a in Label.objects.select_for_update().filter(
                claim_id__in=claims.values(),
                source=Label.Source.IMPORT,
            )
        }
        new, changed = [], []
        for claim_id, (number, label) in latest.items():
            pk = claims.get(claim_id)
            if pk is None:
                report.errors.append(
                    LineError(number, f"unknown claim_id {claim_id!r}", source)
                )
                continue
            extra = dict(label.extra)
            note = str(extra.pop("note", "") or "")
            row = existing.get(pk)
            if row is None:
                new.append(
                    Label(
                        claim_id=pk,
                        source=Label.Source.IMPORT,
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
        Label.objects.bulk_create(new)
        if changed:
            Label.objects.bulk_update(changed, ["label", "note", "extra", "updated_at"])
        report.created += len(new)
        report.updated += len(changed)


def stream_of(text: str) -> IO[bytes]:
    """A binary stream over ``text`` (tests and small API payloads)."""
    return io.BytesIO(text.encode("utf-8"))

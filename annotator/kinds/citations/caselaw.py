"""The deployment's case law in Postgres: opinions and a citation index,
imported from JSONL, and the source the citation checker looks cases up in.

One store serves every citation project. What it covers completely and
whether CourtListener is asked too are the deployment's settings, never a
web user's input.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import IO, Any

from django.conf import settings
from django.db import transaction

from annotator.claims import checking
from annotator.claims.ingest import (
    IMPORT_BATCH_SIZE,
    ImportReport,
    batched,
    parsed_records,
)
from annotator.core.errors import ConfigurationError
from annotator.kinds.citations.models import CaseCitation, CaseOpinion
from annotator.models import Project
from pipeline.checkers.citations.checks import CaseLaw
from pipeline.checkers.citations.courtlistener import CourtListener
from pipeline.checkers.citations.reporters import Coverage, citation_key
from pipeline.checkers.citations.sources import CaseRecord, opinion_from_json
from pipeline.errors import InputError


def _split(key: str) -> tuple[str, int | None, int | None]:
    volume, _, rest = key.partition(" ")
    reporter, _, page = rest.rpartition(" ")
    return (
        reporter,
        int(volume) if volume.isdigit() else None,
        int(page) if page.isdigit() else None,
    )


def opinions_import(*, stream: IO[bytes], name: str) -> ImportReport:
    """Upsert opinions (the case-law JSONL: ``id``, ``case_name``,
    ``citations``, ``text``, ``pages``...) by id, with their citations.
    A bad line is reported and skipped; each batch is one transaction.
    What changed has every citation project checked again."""

    report = ImportReport()

    def parse(raw):
        if not isinstance(raw, dict):
            raise ValueError("not a JSON object")
        try:
            return opinion_from_json(raw), raw
        except InputError as e:
            raise ValueError(str(e)) from e

    def parsed():
        for _, record in parsed_records(stream, name, parse, report, limits={}):
            yield record

    for batch in batched(parsed(), IMPORT_BATCH_SIZE):
        with transaction.atomic():
            latest = {o.id: (o, raw) for o, raw in batch}
            existing = set(
                CaseOpinion.objects.filter(external_id__in=latest).values_list(
                    "external_id", flat=True
                )
            )
            for external_id, (o, raw) in latest.items():
                row, _ = CaseOpinion.objects.update_or_create(
                    external_id=external_id,
                    defaults=dict(
                        case_name=o.case_name,
                        citations=list(o.citations),
                        court=o.court or "",
                        date=o.date or "",
                        text=o.text,
                        pages=raw.get("pages") or [],
                        syllabus=o.syllabus or "",
                        first_page=o.first_page,
                        last_page=o.last_page,
                        extra=o.extra,
                    ),
                )
                keys = {citation_key(c) for c in o.citations}
                row.citation_keys.exclude(key__in=keys).delete()
                row.citation_keys.update(case_name=o.case_name, date=o.date or "")
                CaseCitation.objects.bulk_create(
                    [_citation_row(k, o.case_name, o.date or "", row) for k in keys],
                    ignore_conflicts=True,
                )
            report.updated += len(existing)
            report.created += len(latest) - len(existing)
    if report.created or report.updated:
        citations_recheck()
    return report


def index_import(*, stream: IO[bytes], name: str) -> ImportReport:
    """Upsert citation-index entries (``{"citation", "case_name",
    "date"}``): cases known to exist whose text is not held."""

    report = ImportReport()

    def parse(raw):
        cite = raw.get("citation") if isinstance(raw, dict) else None
        case = raw.get("case_name") if isinstance(raw, dict) else None
        if not isinstance(cite, str) or not cite.strip():
            raise ValueError("'citation' must be a string")
        if not isinstance(case, str) or not case.strip():
            raise ValueError("'case_name' must be a string")
        date = raw.get("date")
        return citation_key(cite), case, date if isinstance(date, str) else ""

    def parsed():
        for _, record in parsed_records(stream, name, parse, report, limits={}):
            yield record

    for batch in batched(parsed(), IMPORT_BATCH_SIZE):
        latest = {key: (case, date) for key, case, date in batch}
        with transaction.atomic():
            known = {
                row.key: row
                for row in CaseCitation.objects.select_for_update().filter(
                    key__in=latest, opinion=None
                )
            }
            changed = []
            for key, row in known.items():
                if (row.case_name, row.date) != latest[key]:
                    row.case_name, row.date = latest[key]
                    changed.append(row)
            CaseCitation.objects.bulk_update(changed, ["case_name", "date"])
            # ignore_conflicts: an entry a concurrent import just added stays.
            CaseCitation.objects.bulk_create(
                [
                    _citation_row(key, *latest[key])
                    for key in latest
                    if key not in known
                ],
                ignore_conflicts=True,
            )
            report.updated += len(changed)
            report.unchanged += len(known) - len(changed)
            report.created += len(latest) - len(known)
    if report.created or report.updated:
        citations_recheck()
    return report


def citations_recheck() -> int:
    """Every citation project's claims checked again, their verdicts kept
    until replaced: case law just loaded can verify a citation that was
    unverifiable, or show one does not exist. Returns how many wait."""
    return sum(
        checking.claims_check_queue(project=project, force=True)
        for project in Project.objects.filter(kind="citations")
    )


def _citation_row(key: str, case_name: str, date: str, opinion=None) -> CaseCitation:
    reporter, volume, page = _split(key)
    return CaseCitation(
        key=key,
        reporter=reporter,
        volume=volume,
        page=page,
        opinion=opinion,
        case_name=case_name,
        date=date,
    )


class DatabaseCaseLaw:
    """The store and index in Postgres as one case-law source: a lookup is
    one indexed query, an opinion's text is read only when a check needs
    it."""

    name = "database"

    def __init__(self) -> None:
        self.first_pages = self

    def lookup(self, citations: Sequence[str]) -> dict[str, list[Any]]:
        out: dict[str, list[Any]] = {c: [] for c in citations}
        rows = (
            CaseCitation.objects.filter(key__in=citations)
            .order_by("key", "opinion_id")
            .values(
                "key",
                "case_name",
                "date",
                "opinion__external_id",
                "opinion__citations",
                "opinion__court",
            )
        )
        for r in rows:
            out[r["key"]].append(_record(r))
        return out

    def opinion(self, case_id: str):
        row = CaseOpinion.objects.filter(external_id=case_id).first()
        if row is None:
            return None
        return opinion_from_json(
            {
                "id": row.external_id,
                "case_name": row.case_name,
                "citations": row.citations,
                "court": row.court or None,
                "date": row.date or None,
                "text": row.text,
                "pages": row.pages,
                "syllabus": row.syllabus,
                "first_page": row.first_page,
                "last_page": row.last_page,
                **row.extra,
            }
        )

    def next_after(self, reporter: str, volume: str, page: int) -> int | None:
        """The first page of the next case of the volume (the store's
        ``first_pages`` interface)."""
        if not volume.isdigit():
            return None
        return (
            CaseCitation.objects.filter(reporter=reporter, volume=volume, page__gt=page)
            .order_by("page")
            .values_list("page", flat=True)
            .first()
        )

    def later_volume(
        self, reporter: str, volume: int, year: int
    ) -> tuple[int, int] | None:
        """A lower volume of the reporter first dated two or more years after
        ``year`` (the store's ``first_pages`` interface)."""
        row = (
            CaseCitation.objects.filter(
                reporter=reporter, volume__lt=volume, date__gte=str(year + 2)
            )
            .order_by("volume")
            .values_list("volume", "date")
            .first()
        )
        return (row[0], int(row[1][:4])) if row else None

    def in_volume(self, reporter: str, volume: str) -> list[Any]:
        if not volume.isdigit():
            return []
        rows = CaseCitation.objects.filter(reporter=reporter, volume=volume).values(
            "key",
            "case_name",
            "date",
            "opinion__external_id",
            "opinion__citations",
            "opinion__court",
        )
        return [_record(r) for r in rows]


def _record(r: dict[str, Any]):
    held = r["opinion__external_id"] is not None
    return CaseRecord(
        id=r["opinion__external_id"] if held else f"index:{r['key']}",
        case_name=r["case_name"],
        citations=tuple(r["opinion__citations"]) if held else (r["key"],),
        date=r["date"] or None,
        court=r["opinion__court"] or None,
        has_text=held,
        source=DatabaseCaseLaw.name,
    )


def deployment_caselaw():
    """The case law every citation project is checked against: the store
    and index here, CourtListener when the deployment has a token, and the
    complete coverage the deployment declares.

    Raises:
        ConfigurationError: CITATION_COMPLETE_REPORTERS does not parse.
    """

    try:
        coverage = Coverage.parse(settings.CITATION_COMPLETE_REPORTERS)
    except InputError as e:
        raise ConfigurationError(f"CITATION_COMPLETE_REPORTERS: {e}") from e
    sources: list[Any] = [DatabaseCaseLaw()]
    if settings.COURTLISTENER_API_TOKEN:
        sources.append(
            CourtListener(
                settings.COURTLISTENER_API_TOKEN, base_url=settings.COURTLISTENER_URL
            )
        )
    return CaseLaw(sources, coverage=coverage)

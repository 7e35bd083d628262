"""PDF documents in the app: an uploaded PDF read into one document whose
metadata keeps its page table (``pipeline.pdf``), and the page of each piece
of evidence found in such a document, for the labeling screen and the API.

The page table is read back from ``Document.metadata["pages"]``, which any
JSONL import may also set: it is used only when it is one (``page_table``),
so a hand-written ``pages`` key never breaks a screen.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any, cast

from django.conf import settings

from pipeline.errors import InputError
from pipeline.pdf import PdfBudgetError, page_span, pdf_document

logger = logging.getLogger(__name__)

MAGIC = b"%PDF-"
# The setting behind each of pipeline.pdf's budgets, named in a refusal.
_BUDGET_SETTINGS = {
    "max_pages": "PDF_MAX_PAGES",
    "max_text_chars": "PDF_MAX_TEXT_CHARS",
    "read_seconds": "PDF_READ_SECONDS",
}


def is_pdf(name: str, head: bytes) -> bool:
    """Whether an uploaded file is to be read as a PDF: by its name, or, for
    a file named otherwise, by the header it starts with (a text that only
    mentions ``%PDF-`` further on stays text)."""
    return name.lower().endswith(".pdf") or head.startswith(MAGIC)


def pdf_file_document(name: str, head: bytes, rest: IO[bytes]):
    """The pipeline Document of an uploaded PDF, ``head`` its first bytes
    already read and ``rest`` the stream of the others: its id is the file
    name without its extension (as a text file's), its metadata the file
    name and the page table.

    Raises:
        InputError: over MAX_UPLOAD_BYTES or a PDF_* budget (named), not a
            PDF, damaged, encrypted or scanned (no text), in words for the
            report.
    """

    limit = settings.MAX_UPLOAD_BYTES
    data = head + rest.read(max(limit + 1 - len(head), 0))
    if len(data) > limit:
        raise InputError(
            f"PDF is over the limit of {limit} bytes (MAX_UPLOAD_BYTES); split it"
        )
    try:
        # Read in the upload request: the budgets bound what one file costs it.
        return pdf_document(
            data,
            id=Path(name).stem or name,
            max_pages=settings.PDF_MAX_PAGES,
            max_text_chars=settings.PDF_MAX_TEXT_CHARS,
            read_seconds=settings.PDF_READ_SECONDS,
            metadata={"filename": name},
        )
    except PdfBudgetError as e:
        raise InputError(f"{e} ({_BUDGET_SETTINGS[e.budget]})") from e
    except InputError:
        raise
    except Exception as e:
        # pypdf meets hostile or broken files with errors of every kind deep
        # in its parser; one such file must cost only its own row of the
        # report, not the upload.
        logger.warning("PDF %r could not be read", name, exc_info=True)
        raise InputError(f"damaged PDF: {type(e).__name__}") from e


def page_table(metadata: Any, length: int) -> list[dict[str, int]] | None:
    """The document's page table (``metadata["pages"]``) when it is one for a
    text of ``length`` characters: pages in order, each
    ``{"page", "start", "end"}`` with integer offsets inside the text, no two
    overlapping; None otherwise."""
    pages = metadata.get("pages") if isinstance(metadata, Mapping) else None
    if not isinstance(pages, list) or not pages:
        return None
    table, previous_end = [], 0
    for entry in pages:
        if not isinstance(entry, Mapping):
            return None
        values = [entry.get(k) for k in ("page", "start", "end")]
        if not all(type(v) is int for v in values):
            return None
        page, start, end = cast(list[int], values)
        if not previous_end <= start <= end <= length:
            return None
        table.append({"page": page, "start": start, "end": end})
        previous_end = end
    return table


def pages_of(table: Sequence[Mapping[str, int]], start: int, end: int) -> list[int]:
    """The pages ``text[start:end]`` touches (``pipeline.pdf.page_span``)."""

    return page_span(table, start, end)


def page_label(pages: Sequence[int]) -> str:
    """``p. 2``, ``pp. 2–3`` for pages in order, "" for none."""
    if not pages:
        return ""
    if len(pages) == 1 or pages[0] == pages[-1]:
        return f"p. {pages[0]}"
    return f"pp. {pages[0]}\u2013{pages[-1]}"


def page_bounds(
    table: Sequence[Mapping[str, int]], start: int, end: int
) -> tuple[list[int], int, int] | None:
    """The pages a span touches, where the first of them starts and the last
    ends in the text: what a window around the span may show. None for a
    span on no page (inside a page break)."""
    touched = pages_of(table, start, end)
    if not touched:
        return None
    by_number = {p["page"]: p for p in table}
    return touched, by_number[touched[0]]["start"], by_number[touched[-1]]["end"]


def evidence_paged(
    evidence: Sequence[Mapping[str, Any]],
    *,
    document: str,
    table: Sequence[Mapping[str, int]] | None,
) -> list[dict[str, Any]]:
    """``evidence`` with its page added to each entry found in ``document``
    (its external id) at known offsets: ``page`` (an int), or ``pages`` (a
    list) for a span across a page break, and ``page_label`` to show. Other
    entries (a case-law opinion, a sample, a context) are left as they are,
    and so is all of it for a document without a page table."""
    if not table:
        return [dict(e) for e in evidence]
    out = []
    for e in evidence:
        e = dict(e)
        start, end = e.get("start"), e.get("end")
        if e.get("source") == document and type(start) is int and type(end) is int:
            touched = pages_of(table, start, end)
            if len(touched) == 1:
                e["page"] = touched[0]
            elif touched:
                e["pages"] = touched
            if touched:
                e["page_label"] = page_label(touched)
        out.append(e)
    return out

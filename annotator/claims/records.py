"""One conversion from database rows to the pipeline's records.

The check and training name rows by database id (stable, never reused);
exports and extraction by the ids users gave them (``external``), which is
what the pipeline's JSONL carries.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from annotator.models import Claim, Document
from pipeline.types import Claim as ClaimRecord
from pipeline.types import Document as DocumentRecord

if TYPE_CHECKING:
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


def claim_record(claim: Claim, *, external: bool = False) -> ClaimRecord:
    """The claim as the pipeline reads it. With ``external`` ids its
    document must be loaded (``select_related("document")``), and its extra
    fields come along, as in an export."""

    if not external:
        return ClaimRecord(
            id=str(claim.pk),
            document_id=str(claim.document_id),
            type=claim.type,
            value=claim.value,
            context=claim.context,
            model=claim.model or None,
            extra=claim.extra,
        )
    return ClaimRecord(
        id=claim.external_id,
        document_id=claim.document.external_id,
        type=claim.type,
        value=claim.value,
        context=claim.context,
        model=claim.model or None,
        extra=claim.extra,
    )

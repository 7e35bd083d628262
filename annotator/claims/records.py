"""One conversion from database rows to the pipeline's records.

The check and training name rows by database id (stable, never reused);
exports and extraction by the ids users gave them (``external``), which is
what the pipeline's JSONL carries.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from annotator.models import Document, Prediction
from pipeline.types import Document as DocumentRecord
from pipeline.types import Prediction as PredictionRecord

if TYPE_CHECKING:
    from pipeline.types import Document as DocumentRecord
    from pipeline.types import Prediction as PredictionRecord


def document_record(document: Document, *, external: bool = False) -> DocumentRecord:
    """The document as the pipeline reads it, metadata included: a RAG item's
    document keeps its query and its contexts' offsets there."""

    return DocumentRecord(
        id=document.external_id if external else str(document.pk),
        text=document.text,
        metadata=document.metadata,
    )


def prediction_record(
    prediction: Prediction, *, external: bool = False
) -> PredictionRecord:
    """The prediction as the pipeline reads it. With ``external`` ids its
    document must be loaded (``select_related("document")``), and its extra
    fields come along, as in an export."""

    if not external:
        return PredictionRecord(
            id=str(prediction.pk),
            document_id=str(prediction.document_id),
            type=prediction.type,
            value=prediction.value,
            context=prediction.context,
            model=prediction.model or None,
            extra=prediction.extra,
        )
    return PredictionRecord(
        id=prediction.external_id,
        document_id=prediction.document.external_id,
        type=prediction.type,
        value=prediction.value,
        context=prediction.context,
        model=prediction.model or None,
        extra=prediction.extra,
    )

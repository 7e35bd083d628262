"""RAG answers checked against their retrieved context (Provenance).

Context items are ranked by relevance to the claim made from the answer
(:mod:`.relevance`), the sources selected by TopK or TopP and kept in
document order (:mod:`.select`), scored by the NLI scorer one by one and
joined, and aggregated (:mod:`.check`); the source that decided is named.
"""

from .check import (
    AGGREGATES,
    CLAIM_PROMPT,
    ClaimResult,
    ItemResult,
    ProvenanceConfig,
    Source,
    check_items,
)
from .checker import CLAIM_TYPE, ProvenanceChecker, item_claim
from .items import Context, RagItem, item_document, item_from_json, item_to_json
from .limits import CheckLimits, DeadlineExceeded, LimitExceeded
from .relevance import BiEncoderRelevance, CrossEncoderRelevance, LexicalRelevance
from .select import Selection

__all__ = [
    "AGGREGATES",
    "CLAIM_PROMPT",
    "CLAIM_TYPE",
    "BiEncoderRelevance",
    "CheckLimits",
    "ClaimResult",
    "Context",
    "CrossEncoderRelevance",
    "DeadlineExceeded",
    "ItemResult",
    "LexicalRelevance",
    "LimitExceeded",
    "ProvenanceChecker",
    "ProvenanceConfig",
    "RagItem",
    "Selection",
    "Source",
    "check_items",
    "item_claim",
    "item_document",
    "item_from_json",
    "item_to_json",
]

"""Frozen records passed between pipeline stages.

They mirror the JSONL data contract, so the CLI, a notebook and the web app
exchange the same shapes. Unknown JSON keys are kept in ``extra``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

LabelValue = Literal["safe", "unsafe"]
#: A check's verdict: a label, or "unscored" where the evidence passed but no
#: scorer judged it, which flags nothing.
VerdictValue = Literal["safe", "unsafe", "unscored"]
Reason = Literal["not_in_document", "not_supported"]


@dataclass(frozen=True)
class Document:
    id: str
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Claim:
    """One claim an LLM made, as the pipeline's files carry it: its
    ``type`` and ``value`` (an extracted field's entity type and value; a
    citation, a RAG answer or a sentence under its kind's one type) and the
    ``context`` it quoted, if any. Each checker says which of these, and of
    ``extra``, are its claim's own fields (``ClaimData``)."""

    id: str
    document_id: str
    type: str
    value: Any
    context: str
    model: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Alignment:
    """Where a context lies in its document.

    ``score`` is matches / alignment length (paper eq. 1); ``start``/``end``
    are offsets into the original document text (``None`` when nothing was
    found), ``text`` is ``document.text[start:end]``.
    """

    score: float
    start: int | None
    end: int | None
    text: str


@dataclass(frozen=True)
class Label:
    claim_id: str
    label: LabelValue
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CheckedClaim:
    """A claim with its hypothesis, alignment, score and verdict.

    ``score`` is the scorer's p(supported), whichever scorer ran (the NLI
    cross-encoder or the LLM grader); None with alignment only. The JSONL
    field keeps its first name, ``nli_score``.
    """

    claim: Claim
    hypothesis: str
    align: Alignment
    score: float | None
    verdict: VerdictValue
    reason: Reason | None

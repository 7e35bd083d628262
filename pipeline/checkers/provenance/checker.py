"""The provenance check behind the :class:`~pipeline.checkers.base.Checker`
protocol.

A RAG item is stored as a document (its contexts, joined, with the query and
the contexts' offsets in ``metadata``: :func:`~.items.item_document`) and a
claim, the answer (:func:`item_claim`). The finding's claim is the weakest
claim made from the answer, its evidence the selected sources with the
deciding one first, and its ``extra`` everything the labeling screen shows.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any, ClassVar

from ...errors import InputError
from ...grader_prompts import SUPPORT_PROMPT, GraderPrompt
from ...jsonl import claim_from_json
from ...score import Scorer
from ...types import Claim, Document, Label, LabelValue, VerdictValue
from .. import register
from ..base import (
    CheckResult,
    ClaimData,
    Evidence,
    Example,
    Finding,
    ItemFormat,
    Pair,
    PaperFigures,
    ScorerCard,
    text_claim_data,
)
from .check import ItemResult, ProvenanceConfig, check_items
from .items import RagItem, item_document, item_from_document, item_from_json
from .limits import CheckLimits
from .relevance import BiEncoderRelevance, LexicalRelevance, Relevance
from .silver import item_group, silver_examples

#: ``Claim.type`` of an answer claim.
CLAIM_TYPE = "rag_answer"
_VERDICT: dict[str, VerdictValue] = {
    "supported": "safe",
    "hallucinated": "unsafe",
    "unscored": "unscored",
}


#: The relevance scorers a deployment may name (settings hold a name, not
#: a model path).
RELEVANCE_NAMES = ("embedding", "lexical")


@lru_cache(maxsize=len(RELEVANCE_NAMES) * 2)
def named_relevance(name: str, *, quantize: bool = False) -> Relevance:
    """The packaged bi-encoder (``embedding``) or BM25 (``lexical``), loaded
    once per process."""
    if name == "lexical":
        return LexicalRelevance()
    if name == "embedding":
        return BiEncoderRelevance(quantize=quantize)
    raise ValueError(f"relevance must be one of {RELEVANCE_NAMES}, got {name!r}")


def item_claim(item: RagItem) -> Claim:
    """The answer of ``item`` as the claim of its document, with the query it
    answers and the item's other fields."""
    return Claim(
        id=item.id,
        document_id=item.id,
        type=CLAIM_TYPE,
        value=item.answer,
        context="",
        extra={**item.extra, "query": item.query},
    )


#: A RAG answer and the query it answers.
CLAIM_DATA = text_claim_data(CLAIM_TYPE, {"answer": (str,), "query": (str,)})


#: A benchmark's label of the answer, as an expert's label.
_ITEM_LABELS: dict[str, LabelValue] = {"supported": "safe", "hallucinated": "unsafe"}


def _item_labels(item: RagItem) -> list[Label]:
    return [] if item.label is None else [Label(item.id, _ITEM_LABELS[item.label])]


@register
class ProvenanceChecker:
    """Checks RAG answers against the contexts they were generated from.

    Args:
        documents: each item's contexts (:func:`~.items.item_document`).
        relevance: ranks context sentences: a :class:`Relevance`, or one of
            :data:`RELEVANCE_NAMES` loaded when first needed; the packaged
            bi-encoder by default.
        int8: quantise a named bi-encoder (CPU).
        config: selection, aggregation, claim prompt.
    """

    kind: ClassVar[str] = "provenance"
    title: ClassVar[str] = "RAG answers against their retrieved context"
    claim_data: ClassVar[ClaimData] = CLAIM_DATA
    evidence_score_name: ClassVar[str] = "Weight among the selected sources"
    aligns: ClassVar[bool] = False
    paper_figures: ClassVar[PaperFigures | None] = None
    grader_prompt: ClassVar[GraderPrompt | None] = SUPPORT_PROMPT
    scorer_card: ClassVar[ScorerCard] = ScorerCard(
        "whether the retrieved sources support a sentence of a RAG answer: "
        "`p(supports | premise = the sources selected for it, hypothesis = "
        "the answer sentence)`",
        ("The Eiffel Tower is in Paris.", "The tower stands in Paris."),
    )
    score_fields: ClassVar[frozenset[str]] = frozenset(
        {"score", "nli", "joined", "verdict"}
    )
    reasons: ClassVar[dict[str, str]] = {
        "not_supported": "Not supported by the sources",
    }
    #: An item is its contexts (the document) and its answer (the claim),
    #: with its label when it has one.
    item_format: ClassVar[ItemFormat] = ItemFormat(
        read=item_from_json,
        document=item_document,
        claims=lambda item: [item_claim(item)],
        labels=_item_labels,
    )

    def __init__(
        self,
        documents: Mapping[str, Document],
        *,
        relevance: Relevance | str = "embedding",
        int8: bool = False,
        config: ProvenanceConfig | None = None,
        **_options: Any,
    ):
        self.documents = documents
        self._relevance = relevance
        self._int8 = int8
        self.config = config or ProvenanceConfig()

    @property
    def relevance(self) -> Relevance:
        if isinstance(self._relevance, str):
            self._relevance = named_relevance(self._relevance, quantize=self._int8)
        return self._relevance

    def claim_from_json(self, raw: Any) -> Claim:
        return claim_from_json(raw)

    def items(
        self, claims: Sequence[Claim]
    ) -> tuple[list[tuple[Claim, RagItem]], list[InputError]]:
        """Each claim with the item its document makes; a claim whose
        document is unknown, or whose answer is not text, is an error."""
        out, errors = [], []
        for p in claims:
            document = self.documents.get(p.document_id)
            if document is None:
                errors.append(InputError(f"{p.id}: unknown document {p.document_id!r}"))
            elif not isinstance(p.value, str) or not p.value.strip():
                errors.append(InputError(f"{p.id}: the answer must be non-empty text"))
            else:
                out.append(
                    (p, item_from_document(document, answer=p.value, item_id=p.id))
                )
        return out, errors

    def results(
        self,
        claims: Sequence[Claim],
        *,
        scorer: Scorer | None = None,
        progress: bool = False,
        limits: CheckLimits | None = None,
        deadline: float | None = None,
    ) -> tuple[list[tuple[Claim, ItemResult]], list[InputError]]:
        """Each claim's item checked (``limits`` and ``deadline`` as
        :func:`~.check.check_items` takes them), and the claims that could
        not be read."""
        pairs, errors = self.items(claims)
        results = check_items(
            [item for _, item in pairs],
            relevance=self.relevance,
            scorer=scorer,
            config=self.config,
            progress=progress,
            limits=limits,
            deadline=deadline,
        )
        return [(p, r) for (p, _), r in zip(pairs, results, strict=True)], errors

    def check(
        self,
        claims: Sequence[Claim],
        *,
        scorer: Scorer | None = None,
        progress: bool = False,
    ) -> CheckResult:
        checked, errors = self.results(claims, scorer=scorer, progress=progress)
        return CheckResult(
            findings=[
                finding_of(p.id, r, self.documents[p.document_id]) for p, r in checked
            ],
            errors=errors,
        )

    def training_pairs(
        self, claims: Sequence[Claim], *, only: Collection[str] | None = None
    ) -> list[Pair]:
        """(joined sources, claim) of each answer, the whole answer as one
        claim: a label judges the answer, not one of its sentences."""
        if only is not None:
            claims = [c for c in claims if c.id in only]
        items, _ = self.items(claims)
        return training_pairs(
            [item for _, item in items], relevance=self.relevance, config=self.config
        )

    def silver_examples(self, claims: Sequence[Claim], *, seed: int) -> list[Example]:
        items, _ = self.items(claims)
        return silver_examples(
            [item for _, item in items],
            seed=seed,
            claim_prompt=self.config.claim_prompt,
        )


def training_pairs(
    items: Sequence[RagItem], *, relevance: Relevance, config: ProvenanceConfig
) -> list[Pair]:
    """What the scorer reads for each item's whole answer, grouped so that
    items sharing contexts stay on one side of a validation split."""
    whole = replace(config, split_answer=False)
    results = check_items(items, relevance=relevance, config=whole)
    return [
        Pair(r.item.id, r.claim.premise, r.claim.claim, item_group(r.item))
        for r in results
    ]


def _context_starts(document: Document) -> dict[str, int]:
    """Where each context starts in the item's document."""
    spans = (document.metadata or {}).get("contexts") or []
    return {str(s["id"]): int(s["start"]) for s in spans}


def finding_of(claim_id: str, r: ItemResult, document: Document) -> Finding:
    """An item's result as a finding: evidence is the weakest claim's
    sources, the deciding one first, with offsets into the document and
    their weights (their NLI scores are in ``extra``)."""
    c = r.claim
    order = list(range(len(c.sources)))
    if c.deciding is not None:
        order.insert(0, order.pop(c.deciding))
    starts = _context_starts(document)
    evidence = tuple(
        Evidence(
            document.id,
            starts.get(s.context, 0) + s.start,
            starts.get(s.context, 0) + s.end,
            s.text,
            "source",
            s.weight,
        )
        for s in (c.sources[i] for i in order)
    )
    return Finding(
        claim_id=claim_id,
        hypothesis=c.claim,
        verdict=_VERDICT[r.verdict],
        reason="not_supported" if r.verdict == "hallucinated" else None,
        score=r.score,
        evidence=evidence,
        premise=c.premise,
        extra=result_extra(r),
    )


def result_extra(r: ItemResult) -> dict[str, Any]:
    """Everything a result says beyond the item, as JSON: the weakest claim's
    sources and every claim made from the answer. Each sentence's claim, and
    its sources' text, are left out (the sources keep their offsets into the
    contexts): every claim repeats the query and a source may be a long
    sentence, so a long query times many sentences made answers of
    megabytes. The size is the item's, plus the weakest claim and its
    sources, plus a few hundred bytes a sentence."""
    c = r.claim
    return {
        "query": r.item.query,
        "answer": r.item.answer,
        "claim": c.claim,
        "score": r.score,
        "verdict": r.verdict,
        "sources": [_source_json(s) for s in c.sources],
        "deciding": c.deciding,
        "joined": c.joined,
        "sentences": [
            {
                "text": x.text,
                "start": x.start,
                "end": x.end,
                "score": x.score,
                "joined": x.joined,
                "deciding": x.deciding,
                "sources": [_source_json(s, text=False) for s in x.sources],
            }
            for x in r.claims
        ]
        if len(r.claims) > 1
        else [],
        "weakest": r.weakest,
    }


def _source_json(s, *, text: bool = True) -> dict[str, Any]:
    out = {"context": s.context, "start": s.start, "end": s.end}
    if text:
        out["text"] = s.text
    return {**out, "relevance": s.relevance, "weight": s.weight, "nli": s.nli}

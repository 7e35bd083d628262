"""The extraction check behind the :class:`~pipeline.checkers.base.Checker`
protocol."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, ClassVar

from ...align import DEFAULT_THRESHOLD
from ...grader_prompts import GraderPrompt
from ...jsonl import claim_from_json
from ...score import Scorer
from ...types import CheckedClaim, Claim, Document
from .. import register
from ..base import (
    ANY_JSON,
    CheckResult,
    ClaimData,
    Evidence,
    Example,
    Finding,
    Pair,
    PaperFigures,
    ScorerCard,
)
from .check import align_claims, check_claims
from .grading import GRADER_PROMPT
from .hypothesis import render_hypothesis
from .patterns import pattern_fields
from .schema import Schema
from .silver import HARD_SHARE, silver_examples

#: An extracted field: its entity type, its value and the context the LLM
#: copied from the document.
CLAIM_DATA = ClaimData(
    fields={"type": (str,), "value": ANY_JSON, "context": (str,)},
    of=lambda c: {"type": c.type, "value": c.value, "context": c.context},
    claim=lambda id, document_id, d: Claim(
        id, document_id, type=d["type"], value=d["value"], context=d["context"]
    ),
    statement=lambda d: render_hypothesis(d["type"], d["value"]),
    corrects=("value", "type"),
    group="type",
)


@register
class ExtractionChecker:
    """Checks claims against ``documents`` (by id).

    Args:
        documents: the documents the claims were extracted from.
        schema: the entity schema, for display names in hypotheses.
        align_threshold: the alignment score a context needs to count as
            found (paper eq. 2).
    """

    kind: ClassVar[str] = "extraction"
    title: ClassVar[str] = "Extracted fields against their document"
    claim_data: ClassVar[ClaimData] = CLAIM_DATA
    evidence_score_name: ClassVar[str] = "Alignment score (matches / alignment length)"
    aligns: ClassVar[bool] = True
    paper_figures: ClassVar[PaperFigures | None] = PaperFigures(
        "paper Table 1, NLI synth>human",
        precision=0.928,
        recall=0.857,
        f1=0.891,
        labels_per_hour=250,
    )
    grader_prompt: ClassVar[GraderPrompt | None] = GRADER_PROMPT
    scorer_card: ClassVar[ScorerCard] = ScorerCard(
        "whether a passage of a document supports an extracted value: "
        "`p(supports | premise = aligned span, hypothesis = "
        '"{Entity Type}: {value}")`',
        ("The hearing took place in Toronto", "GPE: Toronto"),
    )
    score_fields: ClassVar[frozenset[str]] = frozenset()
    reasons: ClassVar[dict[str, str]] = {
        "not_in_document": "Not in document",
        "not_supported": "Not supported",
    }

    def __init__(
        self,
        documents: Mapping[str, Document],
        *,
        schema: Schema | None = None,
        align_threshold: float = DEFAULT_THRESHOLD,
        **_options: Any,
    ):
        self.documents = documents
        self.schema = schema
        self.align_threshold = align_threshold

    def claim_from_json(self, raw: Any) -> Claim:
        return claim_from_json(raw)

    def check(
        self,
        claims: Sequence[Claim],
        *,
        scorer: Scorer | None = None,
        progress: bool = False,
    ) -> CheckResult:
        report = check_claims(
            self.documents,
            claims,
            scorer=scorer,
            schema=self.schema,
            align_threshold=self.align_threshold,
            progress=progress,
        )
        return CheckResult(
            findings=[finding_of(c) for c in report.checked], errors=report.errors
        )

    def training_pairs(
        self, claims: Sequence[Claim], *, only: Collection[str] | None = None
    ) -> list[Pair]:
        """The aligned span and the hypothesis of each claim (of a known
        document); a context below the alignment threshold is decided
        unsafe without the scorer."""
        if only is not None:
            claims = [c for c in claims if c.id in only]
        aligned, _ = align_claims(self.documents, claims)
        return [
            Pair(
                claim_id=p.id,
                premise=a.text,
                hypothesis=render_hypothesis(p.type, p.value, schema=self.schema),
                document_id=p.document_id,
                scored=a.score >= self.align_threshold,
            )
            for p, a in aligned
        ]

    def silver_examples(
        self, claims: Sequence[Claim], *, seed: int, hard_share: float = HARD_SHARE
    ) -> list[Example]:
        """Perturbation pairs (:mod:`.silver`) of every claim whose
        context aligned and of the fields found by pattern in the
        documents (:mod:`.patterns`), so even a few claims teach the task;
        ``hard_share`` 0 draws easy negatives only (the learning-curve
        bench's comparison)."""
        aligned, _ = align_claims(self.documents, claims)
        pool = [(p, a) for p, a in aligned if a.score >= self.align_threshold]
        for doc_id in sorted(self.documents):
            pool += pattern_fields(self.documents[doc_id])
        return silver_examples(
            pool, schema=self.schema, hard_share=hard_share, seed=seed
        )


def finding_of(checked: CheckedClaim) -> Finding:
    """A checked claim as a finding: the aligned span is its evidence."""
    a = checked.align
    return Finding(
        claim_id=checked.claim.id,
        hypothesis=checked.hypothesis,
        verdict=checked.verdict,
        reason=checked.reason,
        score=checked.score,
        premise=a.text,
        evidence=(
            Evidence(
                source=checked.claim.document_id,
                start=a.start,
                end=a.end,
                text=a.text,
                role="aligned",
                score=a.score,
            ),
        ),
    )

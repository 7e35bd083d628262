"""Statements checked word for word against the sentences of their document.

A claim here is one whose value is a statement; its evidence is every
sentence holding at least one of the statement's words, the best first (score:
the share of the statement's words in it). All of them: safe; fewer: unsafe,
not supported. Minimal on purpose: it exercises the shared machinery (check,
storage, labeling page, training pairs), not a method.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any, ClassVar

from pipeline.checkers import register
from pipeline.checkers.base import (
    CheckResult,
    ClaimData,
    Evidence,
    Example,
    Finding,
    Pair,
    PaperFigures,
    ScorerCard,
    text_claim_data,
)
from pipeline.grader_prompts import SUPPORT_PROMPT, GraderPrompt
from pipeline.jsonl import claim_from_json
from pipeline.types import Claim, Document

KIND = "statement-test"


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


#: A statement; its claims keep no other field of their own.
CLAIM_DATA = text_claim_data("statement", {"statement": (str,)})


@register
class StatementChecker:
    kind: ClassVar[str] = KIND
    title: ClassVar[str] = "Statements against their document, word for word"
    claim_data: ClassVar[ClaimData] = CLAIM_DATA
    evidence_score_name: ClassVar[str] = "Share of the statement's words"
    aligns: ClassVar[bool] = False
    paper_figures: ClassVar[PaperFigures | None] = None
    grader_prompt: ClassVar[GraderPrompt | None] = SUPPORT_PROMPT
    scorer_card: ClassVar[ScorerCard] = ScorerCard(
        "whether a source sentence supports a statement: `p(supports | "
        "premise = the source, hypothesis = the statement)`",
        ("The sky is blue.", "The sky has a blue colour."),
    )
    reasons: ClassVar[dict[str, str]] = {"not_supported": "Not supported"}
    score_fields: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, documents: Mapping[str, Document], **options: Any):
        self.documents = documents

    def claim_from_json(self, raw: Any) -> Claim:
        return claim_from_json(raw)

    def check(
        self, claims: Sequence[Claim], *, scorer=None, progress=False
    ) -> CheckResult:
        return CheckResult(findings=[self._finding(c) for c in claims])

    def training_pairs(
        self, claims: Sequence[Claim], *, only: Collection[str] | None = None
    ) -> list[Pair]:
        """The best sentence against the statement."""
        return [
            Pair(f.claim_id, f.premise, f.hypothesis, c.document_id)
            for c in claims
            if only is None or c.id in only
            for f in [self._finding(c)]
        ]

    def silver_examples(self, claims, *, seed: int) -> list[Example]:
        return []

    def _finding(self, claim: Claim) -> Finding:
        statement = str(claim.value)
        wanted = _words(statement)
        document = self.documents[claim.document_id]
        evidence = []
        for match in re.finditer(r"[^.]+\.?", document.text):
            share = len(wanted & _words(match.group())) / max(1, len(wanted))
            if share:
                start = match.start() + len(match.group()) - len(match.group().lstrip())
                evidence.append(
                    Evidence(
                        source=claim.document_id,
                        start=start,
                        end=match.end(),
                        text=document.text[start : match.end()],
                        role="sentence",
                        score=share,
                    )
                )
        evidence.sort(key=lambda e: -e.score)
        supported = bool(evidence) and evidence[0].score == 1.0
        return Finding(
            claim_id=claim.id,
            hypothesis=statement,
            verdict="safe" if supported else "unsafe",
            reason=None if supported else "not_supported",
            score=None,
            evidence=tuple(evidence),
            premise=evidence[0].text if evidence else "",
        )

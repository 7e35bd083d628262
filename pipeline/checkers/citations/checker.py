"""The citation check behind the :class:`~pipeline.checkers.base.Checker`
protocol.

Documents are briefs; a claim is one citation found in a brief
(:func:`citation_claims`), stored as a claim whose value is the
citation's text and whose ``extra`` holds its offsets. The finding's claim
is what the scorer reads: the proposition the citation is given for, or the
citation itself when it is given for none.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, ClassVar, cast

from ...errors import InputError
from ...grader_prompts import SUPPORT_PROMPT, GraderPrompt
from ...jsonl import claim_from_json
from ...score import Scorer
from ...types import Claim, Document, VerdictValue
from .. import register
from ..base import (
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
from .checks import CaseLaw, CitationResult, Span, check_citations
from .parse import Citation, find_citations
from .silver import proposition_examples

#: What each check asks, as the labeling page says it.
CHECK_TITLES = {
    "exists": "The case exists",
    "case_name": "The case name matches",
    "quote": "The quotation is in the opinion",
    "pincite": "The pin cite is within the opinion",
    "proposition": "The opinion supports the proposition",
}
#: ``Claim.type`` of a citation claim.
CLAIM_TYPE = "case_citation"
_VERDICT: dict[str, VerdictValue] = {
    "verified": "safe",
    "hallucinated": "unsafe",
    "unverifiable": "unscored",
}


def citation_claims(documents: Mapping[str, Document]) -> list[Claim]:
    """Every case citation of every brief, as claims to check."""
    return [
        Claim(
            id=c.id,
            document_id=d.id,
            type=CLAIM_TYPE,
            value=c.text,
            context=c.text,
            extra={"start": c.start, "end": c.end, "form": c.form},
        )
        for d in documents.values()
        for c in find_citations(d.text, brief_id=d.id)
    ]


#: A citation: its text, where it lies in the brief and its form (full,
#: short, id, supra); its other parts are parsed again from the brief.
CLAIM_DATA = text_claim_data(
    CLAIM_TYPE,
    {"citation": (str,), "start": (int,), "end": (int,), "form": (str,)},
    context_is_text=True,
)


@register
class CitationChecker:
    """Checks citations in briefs (``documents``, by id) against case law.

    Args:
        documents: the briefs.
        caselaw: the sources to look cases up in, with their complete
            coverage; without one nothing can be verified.
    """

    kind: ClassVar[str] = "citations"
    title: ClassVar[str] = "Legal citations in briefs against case law"
    claim_data: ClassVar[ClaimData] = CLAIM_DATA
    evidence_score_name: ClassVar[str] = "Score of the deciding check"
    aligns: ClassVar[bool] = False
    paper_figures: ClassVar[PaperFigures | None] = None
    grader_prompt: ClassVar[GraderPrompt | None] = SUPPORT_PROMPT
    scorer_card: ClassVar[ScorerCard] = ScorerCard(
        "whether a passage of the cited opinion supports the proposition a "
        "brief cites it for: `p(supports | premise = opinion passage, "
        "hypothesis = the brief's proposition)`",
        (
            "We hold that the statute reaches every contract of sale.",
            "The statute applies to all contracts of sale.",
        ),
    )
    score_fields: ClassVar[frozenset[str]] = frozenset({"hallucination_score"})
    reasons: ClassVar[dict[str, str]] = {
        "no_such_case": "No such case",
        "case_name_mismatch": "Case name mismatch",
        "pincite_out_of_range": "Pincite out of range",
        "quote_not_found": "Quotation not found",
        "proposition_not_supported": "Proposition not supported",
        # Not a hallucination: a check the case law could not make.
        "unverifiable": "Unverifiable",
    }

    def __init__(
        self,
        documents: Mapping[str, Document],
        *,
        caselaw: CaseLaw | None = None,
        **_options: Any,
    ):
        self.documents = documents
        self.caselaw = caselaw or CaseLaw([])
        self._parsed: dict[str, dict[int, Citation]] = {}

    def claim_from_json(self, raw: Any) -> Claim:
        return claim_from_json(raw)

    def find_claims(self, documents: Mapping[str, Document]) -> list[Claim]:
        """The citations of ``documents``, as claims (:func:`citation_claims`)."""
        return citation_claims(documents)

    def check(
        self,
        claims: Sequence[Claim],
        *,
        scorer: Scorer | None = None,
        progress: bool = False,
    ) -> CheckResult:
        checked, errors = self._checked(claims, scorer=scorer)
        return CheckResult(
            findings=[finding_of(p.id, r) for p, r in checked], errors=errors
        )

    def results(
        self, claims: Sequence[Claim], *, scorer: Scorer | None = None
    ) -> tuple[list[CitationResult], list[InputError]]:
        """The full result of each claim's checks (the CLI writes these)."""
        checked, errors = self._checked(claims, scorer=scorer)
        return [r for _, r in checked], errors

    def training_pairs(
        self, claims: Sequence[Claim], *, only: Collection[str] | None = None
    ) -> list[Pair]:
        """(best opinion passage, proposition) of each citation given for a
        proposition of a case whose text is held; other claims are decided
        without the scorer."""
        if only is not None:
            claims = [c for c in claims if c.id in only]
        checked, _ = self._checked(claims)
        pairs = []
        for p, r in checked:
            c = r.citation
            opinion = self.caselaw.opinion(r.matched) if r.matched else None
            # Only the proposition is the scorer's: a citation another check
            # decided is not trained on.
            decided = set(r.problems) - {"proposition_not_supported"}
            if opinion is None or not c.proposition or c.quotes or decided:
                pairs.append(Pair(p.id, "", c.text, p.document_id, scored=False))
                continue
            premise = (
                r.proposition_pair[0]
                if r.proposition_pair
                else self.caselaw.passages(opinion).best(c.proposition, k=1)[0].text
            )
            pairs.append(Pair(p.id, premise, c.proposition, p.document_id))
        return pairs

    def silver_examples(self, claims: Sequence[Claim], *, seed: int) -> list[Example]:
        """Proposition pairs made from the opinions the claims cite (see
        :mod:`.silver`)."""
        checked, _ = self._checked(claims)
        opinions = {
            o.id: o
            for _, r in checked
            if r.matched is not None
            for o in [self.caselaw.opinion(r.matched)]
            if o is not None
        }
        return proposition_examples(
            [opinions[k] for k in sorted(opinions)], self.caselaw, seed=seed
        )

    def _checked(
        self, claims: Sequence[Claim], *, scorer: Scorer | None = None
    ) -> tuple[list[tuple[Claim, CitationResult]], list[InputError]]:
        """Each readable claim with its result, and the claims not read."""
        citations, errors = self._citations(claims)
        results = check_citations(
            [c for _, c in citations], self.caselaw, scorer=scorer
        )
        return [(p, r) for (p, _), r in zip(citations, results, strict=True)], errors

    def _citations(
        self, claims: Sequence[Claim]
    ) -> tuple[list[tuple[Claim, Citation]], list[InputError]]:
        """Each claim's citation, re-read from its brief; a claim whose brief
        is unknown or holds no citation at its offset is an error."""
        out, errors = [], []
        for p in claims:
            brief = self.documents.get(p.document_id)
            if brief is None:
                errors.append(InputError(f"{p.id}: unknown brief {p.document_id!r}"))
                continue
            if p.document_id not in self._parsed:
                self._parsed[p.document_id] = {
                    c.start: c for c in find_citations(brief.text, brief_id=brief.id)
                }
            start = (p.extra or {}).get("start")
            c = None if start is None else self._parsed[p.document_id].get(start)
            if c is None:
                errors.append(
                    InputError(
                        f"{p.id}: no citation at that offset of {p.document_id!r}"
                    )
                )
                continue
            out.append((p, c))
        return out, errors


def _evidence(span: Span, role: str) -> Evidence:
    return Evidence(span.source, span.start, span.end, span.text, role)


def finding_of(claim_id: str, r: CitationResult) -> Finding:
    """A citation's result as a finding. Its evidence starts with the
    citation itself in the brief (where the expert reads it), then the
    deciding check's evidence and every other check's; the checks, problems
    and matched case go in ``extra`` for the labeling screen."""
    c = r.citation
    spans = [r.evidence] if r.evidence else []
    for ch in r.checks:
        if ch.evidence and ch.evidence not in spans:
            spans.append(ch.evidence)
    evidence = (
        Evidence(c.brief_id, c.start, c.end, c.text, "citation"),
        *(_evidence(s, "case" if s.start is None else "opinion") for s in spans),
    )
    # A scored pair's claim is the citation's proposition.
    claim = cast(str, c.proposition) if r.proposition_pair else c.text
    return Finding(
        claim_id=claim_id,
        hypothesis=claim,
        verdict=_VERDICT[r.status],
        reason=r.problems[0]
        if r.problems
        else ("unverifiable" if r.status == "unverifiable" else None),
        score=next((ch.score for ch in r.checks if ch.score is not None), None),
        evidence=evidence,
        premise=r.proposition_pair[0] if r.proposition_pair else "",
        extra=result_extra(r),
        decided=r.status == "verified",
    )


def result_extra(r: CitationResult) -> dict[str, Any]:
    """What a citation's result adds to its finding, as JSON."""
    c = r.citation
    failed = next((ch for ch in r.checks if ch.passed is False), None)
    why = None
    if failed is not None:
        # A failed check names its problem.
        reason = CitationChecker.reasons[cast(str, failed.problem)]
        why = f"{reason}: {failed.detail}".rstrip(": ")
    return {
        "status": r.status,
        "problems": list(r.problems),
        "failed": why,
        "hallucination_score": r.score,
        "case_name": c.case_name,
        "cited": c.key,
        "pincite": c.pincite.text if c.pincite else None,
        "form": c.form,
        "quotes": [q.text for q in c.quotes],
        # A quoted citation is checked by its quotation; its sentence is not a
        # proposition of its own.
        "proposition": None if c.quotes else c.proposition,
        "matched": None
        if r.matched is None
        else {"id": r.matched.id, "case_name": r.matched.case_name},
        "checks": [
            {
                "name": ch.name,
                "title": CHECK_TITLES.get(ch.name, ch.name),
                "passed": ch.passed,
                "problem": ch.problem,
                "detail": ch.detail,
            }
            for ch in r.checks
        ],
    }

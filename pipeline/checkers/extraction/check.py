"""The check stage: align each claim's context, score it, give a verdict."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ...align import DEFAULT_THRESHOLD, DocumentIndex, align_context
from ...errors import InputError
from ...score import Scorer
from ...types import (
    Alignment,
    CheckedClaim,
    Claim,
    Document,
    Reason,
    VerdictValue,
)
from .agreement import pattern_agreement
from .hypothesis import render_hypothesis, type_display_name
from .rivals import rival_hypotheses
from .schema import Schema


@dataclass
class CheckReport:
    checked: list[CheckedClaim] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)


def align_claims(
    documents: Mapping[str, Document],
    claims: Iterable[Claim],
    *,
    progress: bool = False,
) -> tuple[list[tuple[Claim, Alignment]], list[InputError]]:
    """Align every claim's context to its document.

    One :class:`DocumentIndex` is built per document and reused for all of its
    claims. A claim naming an unknown document becomes an error.
    """
    indexes: dict[str, DocumentIndex] = {}
    aligned, errors = [], []
    items = list(claims)
    if progress:
        from tqdm import tqdm

        items = tqdm(items, desc="aligning", unit="pred")
    for p in items:
        document = documents.get(p.document_id)
        if document is None:
            errors.append(
                InputError(f"claim {p.id!r}: unknown document {p.document_id!r}")
            )
            continue
        index = indexes.get(p.document_id)
        if index is None:
            index = indexes[p.document_id] = DocumentIndex(document.text)
        aligned.append((p, align_context(document.text, p.context, index=index)))
    return aligned, errors


def check_claims(
    documents: Mapping[str, Document],
    claims: Iterable[Claim],
    *,
    scorer: Scorer | None = None,
    schema: Schema | None = None,
    align_threshold: float = DEFAULT_THRESHOLD,
    progress: bool = False,
) -> CheckReport:
    """Align, score and judge claims (paper section 3).

    A context that does not align (score below ``align_threshold``) is
    ``unsafe`` / ``not_in_document``; an aligned one whose scorer score is
    below ``scorer.threshold``, or whose span states the field otherwise
    (another date, the other party in this role:
    :func:`.agreement.pattern_agreement`), is ``unsafe`` / ``not_supported``;
    one whose span states it as claimed, or that the scorer passes, is
    ``safe``. A scorer with a ``rival_margin`` also reads each claim's
    rivals (:mod:`.rivals`): a claim that one of them outscores by more than
    the margin is ``unsafe`` / ``not_supported`` too, unless its span states
    it. Without a scorer an aligned one is ``unscored``: a
    copied context says nothing of the value (train a scorer without labels:
    ``python -m pipeline train`` with no ``--labels``).

    Args:
        documents: documents by id.
        claims: claims to check, in any order; output keeps it.
        scorer: an :class:`~pipeline.score.NLIScorer`, an LLM grader or
            anything with ``score_pairs`` and ``threshold``.
        schema: project schema for display names and value renderers.
        align_threshold: tau of paper eq. 2.
        progress: show progress bars on stderr.
    """
    aligned, errors = align_claims(documents, claims, progress=progress)
    hypotheses = [render_hypothesis(p.type, p.value, schema=schema) for p, _ in aligned]
    kept = [i for i, (_, a) in enumerate(aligned) if a.score >= align_threshold]
    # Whether the span states the field as claimed or otherwise: such a
    # verdict needs no rival, only its score (which the queue orders by).
    stated = {
        i: pattern_agreement(
            aligned[i][1].text,
            type_display_name(aligned[i][0].type, schema),
            aligned[i][0].value,
        )
        for i in kept
    }
    scores: dict[int, float] = {}
    rivals: dict[int, float] = {}
    margin = getattr(scorer, "rival_margin", None)
    if scorer is not None and kept:
        pairs = [(aligned[i][1].text, hypotheses[i]) for i in kept]
        owners = list(kept)
        if margin is not None:
            by_document: dict[str, list[Claim]] = {}
            for p, _ in aligned:
                by_document.setdefault(p.document_id, []).append(p)
            for i in kept:
                if stated[i] is not None:
                    continue
                p, a = aligned[i]
                for h in rival_hypotheses(
                    p, a.text, by_document[p.document_id], schema=schema
                ):
                    pairs.append((a.text, h))
                    owners.append(i)
        values = scorer.score_pairs(pairs, progress=progress)
        scores = dict(zip(kept, values[: len(kept)], strict=True))
        for i, value in zip(owners[len(kept) :], values[len(kept) :], strict=True):
            rivals[i] = max(rivals.get(i, 0.0), value)
    report = CheckReport(errors=errors)
    for i, ((claim, alignment), hypothesis) in enumerate(
        zip(aligned, hypotheses, strict=True)
    ):
        score = scores.get(i)
        states = stated.get(i)
        verdict: VerdictValue
        reason: Reason | None
        if alignment.score < align_threshold:
            verdict, reason = "unsafe", "not_in_document"
        elif states is False:
            verdict, reason = "unsafe", "not_supported"
        elif score is None or scorer is None:  # no scorer, no scores
            verdict, reason = "unscored", None
        elif states is None and (
            score < scorer.threshold
            # rivals are read only with a margin
            or (margin is not None and i in rivals and rivals[i] - score > margin)
        ):
            verdict, reason = "unsafe", "not_supported"
        else:
            verdict, reason = "safe", None
        report.checked.append(
            CheckedClaim(
                claim=claim,
                hypothesis=hypothesis,
                align=alignment,
                score=score,
                verdict=verdict,
                reason=reason,
            )
        )
    return report

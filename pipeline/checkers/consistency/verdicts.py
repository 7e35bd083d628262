"""From judgements to block and response verdicts (paper 2.4 and A.4).

A block's score is the weighted mean of its judgements' scores (ACCURATE 0,
NEUTRAL 0.5, CONTRADICTION 1), weighted 2, 1 and 4: a contradiction counts
most. UNKNOWN judgements (an answer that could not be read) weigh nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from .items import JudgementLabel, ResponseLabel

SCORES: Mapping[str, float] = MappingProxyType(
    {"ACCURATE": 0.0, "NEUTRAL": 0.5, "CONTRADICTION": 1.0}
)
WEIGHTS: Mapping[str, float] = MappingProxyType(
    {"ACCURATE": 2, "NEUTRAL": 1, "CONTRADICTION": 4, "UNKNOWN": 0}
)
#: A.4: [0, tau] is ACCURATE, [1 - tau, 1] CONTRADICTION, NEUTRAL between.
DEFAULT_TAU = 0.33


def block_score(
    labels: Iterable[str], *, weights: Mapping[str, float] = WEIGHTS
) -> float | None:
    """The weighted mean score of a block's judgement labels; ``None`` when
    no judgement has weight (all UNKNOWN, or none)."""
    total = weight_sum = 0.0
    for label in labels:
        weight = weights.get(label, 0) if label in SCORES else 0
        total += weight * SCORES.get(label, 0.0)
        weight_sum += weight
    return total / weight_sum if weight_sum else None


def block_label(score: float | None, *, tau: float = DEFAULT_TAU) -> JudgementLabel:
    """ACCURATE up to ``tau``, CONTRADICTION from ``1 - tau``, NEUTRAL between;
    UNKNOWN for a block with no score."""
    if score is None:
        return "UNKNOWN"
    if score <= tau:
        return "ACCURATE"
    if score >= 1 - tau:
        return "CONTRADICTION"
    return "NEUTRAL"


def response_verdict(
    blocks: Iterable[tuple[float | None, str]],
) -> tuple[float | None, ResponseLabel]:
    """``(score, label)`` of a response from its blocks' ``(score, label)``.

    The score is the mean over the blocks that have one (``None`` if none
    does); the label NON-FACTUAL when any block is a CONTRADICTION.
    """
    blocks = list(blocks)
    scores = [s for s, _ in blocks if s is not None]
    score = sum(scores) / len(scores) if scores else None
    flagged = any(label == "CONTRADICTION" for _, label in blocks)
    return score, "NON-FACTUAL" if flagged else "FACTUAL"

"""Choosing the sources among an answer's context items (paper 3.2).

Relevance scores become a distribution (softmax); TopK keeps the ``k`` most
relevant, TopP the fewest whose probabilities sum to at least ``p``. The
kept ones are renormalised into weights and returned in their original
order: the paper's appendix A.2 found document order worth a quarter of the
AUC, since a fact checker reads sources as text.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Selection:
    """``topk:K`` or ``topp:P``; ``limit`` caps how many sources TopP may keep
    (a flat distribution over a long document would keep most of it)."""

    rule: Literal["topk", "topp"] = "topp"
    value: float = 0.9
    limit: int = 5

    @classmethod
    def parse(cls, text: str) -> Selection:
        """Read ``topk:5`` or ``topp:0.9``.

        Raises:
            ValueError: naming what is wrong with ``text``.
        """
        rule, _, value = text.partition(":")
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if rule == "topk" and number >= 1 and number.is_integer():
            return cls("topk", number)
        if rule == "topp" and 0 < number <= 1:
            return cls("topp", number)
        raise ValueError(
            f"selection {text!r}: use topk:K (K a whole number >= 1) "
            "or topp:P (0 < P <= 1)"
        )

    def __str__(self) -> str:
        value = int(self.value) if self.rule == "topk" else self.value
        return f"{self.rule}:{value}"


def softmax(scores: Sequence[float]) -> list[float]:
    if not scores:
        return []
    top = max(scores)
    exps = [math.exp(s - top) for s in scores]
    total = sum(exps)
    return [e / total for e in exps]


def select_sources(
    probabilities: Sequence[float], selection: Selection
) -> list[tuple[int, float]]:
    """``(index, weight)`` of each kept source, in original order; weights sum
    to one. Ties in relevance go to the earlier source."""
    ranked = sorted(range(len(probabilities)), key=lambda i: -probabilities[i])
    if selection.rule == "topk":
        kept = ranked[: int(selection.value)]
    else:
        kept, total = [], 0.0
        for i in ranked[: selection.limit]:
            kept.append(i)
            total += probabilities[i]
            if total >= selection.value - 1e-9:
                break
    mass = sum(probabilities[i] for i in kept)
    if mass <= 0:
        return [(i, 1 / len(kept)) for i in sorted(kept)]
    return [(i, probabilities[i] / mass) for i in sorted(kept)]

"""Checking RAG answers against their sources (paper section 3).

For each answer: make the claim ('The answer to the question "{query}" is:
{answer}.', the paper's claim prompt with the question quoted, so that it
reads as a sentence whatever the answer's form), split the contexts into
sentence items, rank them by relevance to the claim (or, as the paper does,
to the question: ``rank_against``), select the sources
(TopK / TopP), score each (source, claim) pair and the sources joined in
document order with the NLI scorer, and aggregate. An answer of several
sentences is checked sentence by sentence as well; its weakest sentence
decides. Work is batched over all items: one embedding pass and one
scoring pass, pairs deduplicated.

A caller waiting on the answer (the online check) bounds the work with
:class:`CheckLimits` and a deadline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Literal

from ...score import Scorer
from ..sentences import iter_sentence_spans
from .items import RagItem
from .limits import DEADLINE_SLICE, CheckLimits, LimitExceeded, in_time
from .relevance import Relevance
from .select import Selection, select_sources, softmax

#: The paper's claim prompt, its question quoted; ``{query}`` and
#: ``{answer}`` are filled in.
CLAIM_PROMPT = 'The answer to the question "{query}" is: {answer}.'
#: How per-source NLI scores become the claim's score; ``joined`` scores the
#: selected sources read together, in document order.
AGGREGATES = ("min", "max", "weighted", "joined")
Aggregate = Literal["min", "max", "weighted", "joined"]
#: What context sentences are ranked against: the claim (the question and
#: the answer) or, as the paper's query-passage reranker reads them, the
#: question alone. The claim is the default: with the packaged embedder it
#: selects the sentence holding the right answer more often, for right and
#: hallucinated answers alike (``bench/bench_provenance_relevance.py``, on
#: HaluEval QA dev lines).
RankAgainst = Literal["claim", "query"]
RANK_AGAINST: tuple[RankAgainst, ...] = ("claim", "query")


@dataclass(frozen=True)
class ProvenanceConfig:
    """How answers are checked.

    ``joined_chars`` bounds the joined premise (the scorer reads 128 tokens):
    the least relevant sources are left out of it until it fits.
    """

    selection: Selection = field(default_factory=Selection)
    aggregate: Aggregate = "joined"
    claim_prompt: str = CLAIM_PROMPT
    split_contexts: bool = True
    split_answer: bool = True
    joined_chars: int = 500
    rank_against: RankAgainst = "claim"


@dataclass(frozen=True)
class Source:
    """A selected context sentence: which context (its id) and where in it,
    its normalised relevance, its weight among the selected, and the NLI
    score of the claim against it alone."""

    context: str
    start: int
    end: int
    text: str
    relevance: float
    weight: float
    nli: float | None


@dataclass(frozen=True)
class ClaimResult:
    """One claim made from the answer (all of it, or one sentence at
    ``start:end`` of the answer), its sources in document order and its
    score. ``deciding`` indexes the source that decided it."""

    text: str
    start: int
    end: int
    claim: str
    sources: tuple[Source, ...]
    joined: float | None
    score: float | None
    deciding: int | None
    premise: str


@dataclass(frozen=True)
class ItemResult:
    """An item's claims; the weakest (lowest score) is the item's."""

    item: RagItem
    claims: tuple[ClaimResult, ...]
    weakest: int
    score: float | None
    verdict: Literal["supported", "hallucinated", "unscored"]

    @property
    def claim(self) -> ClaimResult:
        return self.claims[self.weakest]


@dataclass(frozen=True)
class Unit:
    """A context item the relevance scorer ranks: a sentence of a context
    (or a whole context) and where it is in that context."""

    context: str
    start: int
    end: int
    text: str


def render_claim(prompt: str, query: str, answer: str) -> str:
    """The claim the scorer reads. Without a query the answer is the claim
    (a summary has no question); the answer's final full stop is dropped so
    the prompt's own ends it."""
    answer = answer.strip()
    if not query.strip():
        return answer
    return prompt.format(query=query.strip(), answer=answer.rstrip(". "))


def context_units(
    item: RagItem, *, split: bool, limit: int | None = None
) -> list[Unit]:
    """The context items the relevance scorer ranks: each context's
    sentences (or each context whole).

    Raises:
        LimitExceeded: more than ``limit`` contexts or units (splitting
            stops at the first one over).
    """
    if limit is not None and len(item.contexts) > limit:
        raise LimitExceeded(
            f"{item.id}: {len(item.contexts)} contexts, over the limit of "
            f"{limit} context sentences (each context is at least one)",
            limit="sentences",
        )
    units: list[Unit] = []
    for c in item.contexts:
        spans = iter_sentence_spans(c.text) if split else [(0, len(c.text))]
        if limit is not None:
            spans = islice(spans, limit - len(units) + 1)
        units.extend(
            u
            for u in (Unit(c.id, a, b, c.text[a:b]) for a, b in spans)
            if u.text.strip()
        )
        if limit is not None and len(units) > limit:
            raise LimitExceeded(
                f"{item.id}: the contexts have more than {limit} sentences",
                limit="sentences",
            )
    return units


def answer_parts(
    answer: str, *, split: bool, limit: int | None = None
) -> list[tuple[int, int]]:
    """The whole answer, or its sentences when it has several.

    Raises:
        LimitExceeded: more than ``limit`` sentences.
    """
    spans = iter_sentence_spans(answer) if split else iter(())
    parts = list(spans if limit is None else islice(spans, limit + 1))
    if limit is not None and len(parts) > limit:
        raise LimitExceeded(
            f"the answer has more than {limit} sentences (one claim each)",
            limit="claims",
        )
    return parts if len(parts) > 1 else [(0, len(answer))]


def joined_premise(units: Sequence[Unit], kept, *, limit: int) -> str:
    """The kept sources' text in document order, leaving out the least
    relevant ones (never the last one) until it fits ``limit`` characters."""
    chosen = list(kept)
    while len(chosen) > 1 and sum(len(units[i].text) + 1 for i, _ in chosen) > limit:
        chosen.remove(min(chosen, key=lambda iw: iw[1]))
    return " ".join(units[i].text for i, _ in chosen)


def check_items(
    items: Sequence[RagItem],
    *,
    relevance: Relevance,
    scorer: Scorer | None = None,
    config: ProvenanceConfig | None = None,
    progress: bool = False,
    limits: CheckLimits | None = None,
    deadline: float | None = None,
) -> list[ItemResult]:
    """Check every item; without ``scorer`` sources are selected but nothing
    is scored and every verdict is ``unscored``.

    Args:
        items: the answers with their contexts.
        relevance: ranks context sentences against each claim.
        scorer: p(supported) of (premise, claim) pairs: the NLI cross-encoder.
        config: selection, aggregation, claim prompt, splitting.
        limits: what one item may ask; none by default.
        deadline: a ``time.monotonic()`` past which the check stops, looked
            at between stages and every DEADLINE_SLICE texts embedded or
            pairs scored.

    Raises:
        LimitExceeded: an item over ``limits``, before any model runs.
        DeadlineExceeded: ``deadline`` passed.
    """
    config = config or ProvenanceConfig()
    limits = limits or CheckLimits()
    plans = []
    for item in items:
        if limits.query_chars is not None and len(item.query) > limits.query_chars:
            raise LimitExceeded(
                f"{item.id}: the query has {len(item.query)} characters, over "
                f"the limit of {limits.query_chars}",
                limit="query_chars",
            )
        parts = answer_parts(
            item.answer, split=config.split_answer, limit=limits.claims
        )
        units = context_units(item, split=config.split_contexts, limit=limits.sentences)
        claims = [
            render_claim(config.claim_prompt, item.query, item.answer[a:b])
            for a, b in parts
        ]
        plans.append((item, units, parts, claims))
        in_time(deadline, "splitting")
    logits = relevance.logits(
        [
            # Without a question (a summary) the claim is all there is.
            (item.query.strip() or c) if config.rank_against == "query" else c
            for item, _, _, claims in plans
            for c in claims
        ],
        [[u.text for u in units] for _, units, _, claims in plans for _ in claims],
        deadline=deadline,
    )
    in_time(deadline, "ranking")
    selected = []
    # Every distinct (premise, claim) pair, scored in one pass.
    pairs: dict[tuple[str, str], None] = {}
    at = 0
    for _, units, _, claims in plans:
        for claim in claims:
            probs = softmax(logits[at])
            kept = select_sources(probs, config.selection) if units else []
            premise = joined_premise(units, kept, limit=config.joined_chars)
            selected.append((probs, kept, premise))
            pairs.update(dict.fromkeys((units[i].text, claim) for i, _ in kept))
            if premise:
                pairs[(premise, claim)] = None
            at += 1
    nli: dict[tuple[str, str], float] = {}
    if scorer is not None:
        keys = list(pairs)
        step = len(keys) if deadline is None else DEADLINE_SLICE
        for at in range(0, len(keys), step or 1):
            batch = keys[at : at + step]
            scores = scorer.score_pairs(batch, progress=progress)
            nli.update(zip(batch, scores, strict=True))
            in_time(deadline, "scoring")
    results, at = [], 0
    for item, units, parts, claims in plans:
        claim_results = []
        for (a, b), claim in zip(parts, claims, strict=True):
            probs, kept, premise = selected[at]
            at += 1
            claim_results.append(
                _claim_result(
                    item.answer[a:b],
                    a,
                    b,
                    claim,
                    units,
                    probs,
                    kept,
                    premise,
                    nli,
                    aggregate=config.aggregate,
                )
            )
        results.append(_item_result(item, claim_results, scorer))
    return results


def _claim_result(
    text, start, end, claim, units, probs, kept, premise, nli, *, aggregate
) -> ClaimResult:
    sources = tuple(
        Source(
            context=units[i].context,
            start=units[i].start,
            end=units[i].end,
            text=units[i].text,
            relevance=probs[i],
            weight=weight,
            nli=nli.get((units[i].text, claim)),
        )
        for i, weight in kept
    )
    joined = nli.get((premise, claim)) if premise else None
    scores = [s.nli for s in sources if s.nli is not None]
    if not sources or len(scores) < len(sources):
        return ClaimResult(text, start, end, claim, sources, None, None, None, premise)
    best = max(range(len(sources)), key=lambda i: scores[i])
    deciding = (
        min(range(len(sources)), key=lambda i: scores[i])
        if (aggregate == "min")
        else best
    )
    score = {
        "min": lambda: min(scores),
        "max": lambda: max(scores),
        "weighted": lambda: sum(
            s.weight * value for s, value in zip(sources, scores, strict=True)
        ),
        "joined": lambda: joined,
    }[aggregate]()
    return ClaimResult(
        text, start, end, claim, sources, joined, score, deciding, premise
    )


def _item_result(item, claims: list[ClaimResult], scorer) -> ItemResult:
    scored = {i: c.score for i, c in enumerate(claims) if c.score is not None}
    if scorer is None or not scored:
        return ItemResult(item, tuple(claims), 0, None, "unscored")
    weakest = min(scored, key=lambda i: scored[i])
    score = scored[weakest]
    verdict: Literal["supported", "hallucinated"] = (
        "supported" if score >= scorer.threshold else "hallucinated"
    )
    return ItemResult(item, tuple(claims), weakest, score, verdict)

"""The consistency check behind the :class:`~pipeline.checkers.base.Checker`
protocol, judged offline.

An item is stored as a document (:func:`~.items.item_document`): its
response the text, its prompt and samples in ``metadata``. Its claims are
the response's blocks, found in the document (:func:`block_claims`). The
offline NLI judge (:class:`~.judge.NLIJudge`) reads each block against every
sample's sentences; the block's weighted score and label (:mod:`.verdicts`)
give the verdict: ACCURATE safe, CONTRADICTION unsafe ("contradicted"),
NEUTRAL unscored ("unverified": no sample speaks to it, or they conflict;
the paper counts only a contradiction against an answer), a block with
nothing to judge it by unscored. A correction kept with the item for the block
(the web app's corrections run) comes with its finding. Sampling, the LLM
judge and corrections are otherwise the command line's (``python -m pipeline
consistency``).
"""

from __future__ import annotations

import random
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from ...errors import InputError
from ...grader_prompts import GraderPrompt
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
    ItemFormat,
    Pair,
    PaperFigures,
    ScorerCard,
    text_claim_data,
)
from ..perturb import entities, negate, swap_entity
from ..sentences import sentence_spans
from .check import ConsistencyConfig
from .items import (
    Block,
    Item,
    Judgement,
    Sample,
    item_document,
    item_from_document,
    item_from_json,
)
from .judge import NLIJudge, SentenceJudgement, content_words, topical_sentence
from .verdicts import block_label, block_score

#: ``Claim.type`` of a block claim.
CLAIM_TYPE = "response_block"
#: The reason of a block the samples do not settle: no verdict, for an
#: expert to decide (and the improver to correct, as the paper does).
UNVERIFIED = "unverified"
#: A block's label as a verdict and a reason.
_VERDICT: dict[str, tuple[VerdictValue, str | None]] = {
    "ACCURATE": ("safe", None),
    "CONTRADICTION": ("unsafe", "contradicted"),
    "NEUTRAL": ("unscored", UNVERIFIED),
    "UNKNOWN": ("unscored", None),
}
#: The order judgements are shown in: what speaks against the block first.
_SHOWN_FIRST = {"CONTRADICTION": 0, "ACCURATE": 1, "NEUTRAL": 2, "UNKNOWN": 3}
#: Sample sentences drawn per item for silver pairs.
SENTENCES_PER_ITEM = 2
_WORDS = re.compile(r"\w+")


def block_id(document_id: str, index: int) -> str:
    """The claim id of block ``index`` of a document's response."""
    return f"{document_id}#b{index}"


def block_claims(documents: Mapping[str, Document]) -> list[Claim]:
    """Every block (sentence) of every response, as claims to check: the
    block's text the value, its index and offsets in ``extra``."""
    return [
        Claim(
            id=block_id(d.id, i),
            document_id=d.id,
            type=CLAIM_TYPE,
            value=d.text[a:b],
            context="",
            extra={"block": i, "start": a, "end": b},
        )
        for d in documents.values()
        for i, (a, b) in enumerate(sentence_spans(d.text))
    ]


#: A sentence of a response: its text, its index among the response's
#: blocks and where it lies in the response.
CLAIM_DATA = text_claim_data(
    CLAIM_TYPE, {"sentence": (str,), "block": (int,), "start": (int,), "end": (int,)}
)


#: What a sample's sentence does to the block, as the labeling page says it.
JUDGED = {
    "ACCURATE": "agrees",
    "CONTRADICTION": "contradicts",
    "NEUTRAL": "does not say",
    None: "not judged",
}


def sample_source(index: int, sample: Sample) -> str:
    """How evidence names the sample it was found in: "sample 2 (model)",
    counted from 1."""
    name = f"sample {index + 1}"
    return f"{name} ({sample.model})" if sample.model else name


@dataclass(frozen=True)
class _Located:
    """A claim with the item of its document and where its block is."""

    claim: Claim
    item: Item
    start: int
    end: int
    index: int | None


@register
class ConsistencyChecker:
    """Checks each sentence of free-form answers against other models'
    samples, with the offline judge.

    Args:
        documents: each item as a document (:func:`~.items.item_document`).
        config: ``tau`` and ``weights`` label the blocks (the sampling
            options are the command line's).
        min_overlap: as :class:`~.judge.NLIJudge`'s.
    """

    kind: ClassVar[str] = "consistency"
    title: ClassVar[str] = "Free-form answers against other models' samples"
    claim_data: ClassVar[ClaimData] = CLAIM_DATA
    # The sample sentences' NLI scores are machine judgements: they stay in
    # the judgements of ``extra``, which projects hiding scores hide, and no
    # evidence carries one.
    evidence_score_name: ClassVar[str] = "None (NLI scores are in the judgements)"
    aligns: ClassVar[bool] = False
    paper_figures: ClassVar[PaperFigures | None] = None
    grader_prompt: ClassVar[GraderPrompt | None] = None
    scorer_card: ClassVar[ScorerCard] = ScorerCard(
        "whether another model's sample supports a block of a free-form "
        "answer: `p(supports | premise = the deciding sample sentence, "
        "hypothesis = the block)`",
        ("Marie Curie won two Nobel Prizes.", "Curie was awarded two Nobels."),
    )
    score_fields: ClassVar[frozenset[str]] = frozenset(
        {"p", "block_score", "block_label"}
    )
    reasons: ClassVar[dict[str, str]] = {
        "contradicted": "Contradicted by other models' samples",
        UNVERIFIED: "Unverified: the samples do not settle it",
    }
    item_format: ClassVar[ItemFormat] = ItemFormat(
        read=item_from_json, document=item_document
    )

    def __init__(
        self,
        documents: Mapping[str, Document],
        *,
        config: ConsistencyConfig | None = None,
        min_overlap: float = 0.5,
        **_options: Any,
    ):
        self.documents = documents
        self.config = config or ConsistencyConfig()
        self.min_overlap = min_overlap
        self._items: dict[str, Item | InputError] = {}

    def claim_from_json(self, raw: Any) -> Claim:
        return claim_from_json(raw)

    def find_claims(self, documents: Mapping[str, Document]) -> list[Claim]:
        """The blocks of ``documents``' responses (:func:`block_claims`)."""
        return block_claims(documents)

    def check(
        self,
        claims: Sequence[Claim],
        *,
        scorer: Scorer | None = None,
        progress: bool = False,
    ) -> CheckResult:
        """Judge each block against its item's samples with ``scorer``; with
        no scorer, or no samples, the block is unscored and its evidence is
        each sample's sentence most about it."""
        located, errors = self._locate(claims)
        judge = (
            None if scorer is None else NLIJudge(scorer, min_overlap=self.min_overlap)
        )
        by_item: dict[str, list[_Located]] = {}
        for x in located:
            by_item.setdefault(x.claim.document_id, []).append(x)
        groups: Any = by_item.values()
        if progress:
            from tqdm import tqdm

            groups = tqdm(groups, desc="checking", unit="answer")
        findings: dict[str, Finding] = {}
        for group in groups:
            item = group[0].item
            rows: Sequence[tuple[SentenceJudgement, ...] | None] = [None] * len(group)
            if judge is not None and item.samples:
                rows = judge.judge_sentences(item, [(x.start, x.end) for x in group])
            for x, row in zip(group, rows, strict=True):
                findings[x.claim.id] = self._finding(x, row)
        return CheckResult(
            findings=[findings[c.id] for c in claims if c.id in findings],
            errors=errors,
        )

    def training_pairs(
        self, claims: Sequence[Claim], *, only: Collection[str] | None = None
    ) -> list[Pair]:
        """(deciding sample sentence, block) of each block whose item has
        samples: a label says whether the block is right, so the pair
        teaches the judge's scorer whether that sentence supports it. With
        no scorer at hand the deciding sentence is the one of all samples
        sharing most content words with the block, which is the one the
        judge decides by unless another supports the block."""
        if only is not None:
            claims = [c for c in claims if c.id in only]
        located, _ = self._locate(claims)
        pairs = []
        for x in located:
            block = x.item.response[x.start : x.end]
            premise = deciding_sentence(block, x.item.samples)
            if premise:
                pairs.append(Pair(x.claim.id, premise, block, x.claim.document_id))
        return pairs

    def silver_examples(self, claims: Sequence[Claim], *, seed: int) -> list[Example]:
        """Pairs made from the samples themselves (:func:`silver_examples`)."""
        ids = sorted({c.document_id for c in claims})
        items = []
        for document_id in ids:
            item = self._item(document_id)
            if isinstance(item, Item):
                items.append((document_id, item))
        return silver_examples(items, seed=seed)

    def _item(self, document_id: str) -> Item | InputError:
        if document_id not in self._items:
            document = self.documents.get(document_id)
            if document is None:
                found: Item | InputError = InputError(
                    f"unknown document {document_id!r}"
                )
            else:
                try:
                    found = item_from_document(document)
                except ValueError as e:
                    found = InputError(f"document {document_id!r}: {e}")
            self._items[document_id] = found
        return self._items[document_id]

    def _locate(
        self, claims: Sequence[Claim]
    ) -> tuple[list[_Located], list[InputError]]:
        """Each claim with its item and its block's offsets: those the claim
        records while they still hold its text, else the first block with its
        text, else the first place the response has it. A claim whose
        document is unknown or malformed, or whose text the response no
        longer has (a labelled block of a response since changed), is an
        error."""
        out, errors = [], []
        spans_of: dict[str, list[tuple[int, int]]] = {}
        for p in claims:
            item = self._item(p.document_id)
            if isinstance(item, InputError):
                errors.append(InputError(f"{p.id}: {item}"))
                continue
            if not isinstance(p.value, str) or not p.value.strip():
                errors.append(InputError(f"{p.id}: the block must be non-empty text"))
                continue
            text = item.response
            if p.document_id not in spans_of:
                spans_of[p.document_id] = sentence_spans(text)
            spans = spans_of[p.document_id]
            extra = p.extra or {}
            start, end = extra.get("start"), extra.get("end")
            if not (
                isinstance(start, int)
                and isinstance(end, int)
                and text[start:end] == p.value
            ):
                start = next((a for a, b in spans if text[a:b] == p.value), None)
                if start is None:
                    start = text.find(p.value)
                end = start + len(p.value)
            if start < 0:
                errors.append(
                    InputError(
                        f"{p.id}: the response of {p.document_id!r} no longer "
                        "has this block"
                    )
                )
                continue
            index = spans.index((start, end)) if (start, end) in spans else None
            out.append(_Located(p, item, start, end, index))
        return out, errors

    def _finding(
        self, x: _Located, row: tuple[SentenceJudgement, ...] | None
    ) -> Finding:
        item = x.item
        block = item.response[x.start : x.end]
        if row is None:
            score, label = None, "UNKNOWN"
            judgements = [
                _unjudged(j, sample, block) for j, sample in enumerate(item.samples)
            ]
        else:
            score = block_score(
                (s.judgement.label for s in row), weights=self.config.weights
            )
            label = block_label(score, tau=self.config.tau)
            judgements = [_judgement_json(s, item.samples) for s in row]
        judgements.sort(key=lambda j: (_SHOWN_FIRST.get(j["label"], 4), j["sample"]))
        found = [i for i, j in enumerate(judgements) if j["start"] is not None]
        evidence = tuple(
            Evidence(j["source"], j["start"], j["end"], j["evidence"], "sample")
            for j in (judgements[i] for i in found)
        )
        # The judgement agreeing with the block's label decides it (the
        # contradiction of a contradicted block, a support of an accurate
        # one), though what speaks against the block is listed first.
        deciding = None
        if row is not None and found:
            deciding = next(
                (i for i in found if judgements[i]["label"] == label), found[0]
            )
        premise = (
            judgements[found[0] if deciding is None else deciding]["evidence"]
            if found
            else ""
        )
        verdict, reason = _VERDICT[label]
        correction = next(
            (
                c
                for c in item.corrections
                if (c.start, c.end) == (x.start, x.end) and c.holds(item.response)
            ),
            None,
        )
        if not item.samples:
            note = "No samples to compare with: this answer came without any."
        elif row is None:
            note = "Not judged: no scorer. Each sample's sentence most about it."
        else:
            note = ""
        return Finding(
            claim_id=x.claim.id,
            hypothesis=block,
            verdict=verdict,
            reason=reason,
            score=None if score is None else 1.0 - score,
            evidence=evidence,
            premise=premise,
            extra={
                "prompt": item.prompt,
                "block": x.index,
                "start": x.start,
                "end": x.end,
                # The response around the block, for the labeling screen.
                "before": item.response[: x.start],
                "after": item.response[x.end :],
                "samples": len(item.samples),
                "judgements": judgements,
                "deciding": deciding,
                "block_score": score,
                "block_label": label,
                "note": note,
                "correction": correction.correction if correction else None,
                "summary": correction.summary if correction else None,
            },
        )


def finding_block(text: str, extra: Mapping[str, Any]) -> Block:
    """The judged block a finding's ``extra`` describes (as
    :meth:`ConsistencyChecker.check` wrote it), for correcting it later:
    its judgements, the unjudged samples left out.

    Raises:
        ValueError: ``extra`` is not such a finding's.
    """
    start, end = extra.get("start"), extra.get("end")
    if type(start) is not int or type(end) is not int:
        raise ValueError("the finding has no block offsets")
    judgements = tuple(
        Judgement(j["sample"], j["label"], j.get("evidence") or "")
        for j in extra.get("judgements") or ()
        if isinstance(j, Mapping) and j.get("label") in _SHOWN_FIRST
    )
    return Block(
        start,
        end,
        text,
        judgements,
        extra.get("block_score"),
        extra.get("block_label") or "UNKNOWN",
    )


def _judgement_json(s: SentenceJudgement, samples: Sequence[Sample]) -> dict[str, Any]:
    j = s.judgement
    sample = samples[j.sample]
    return {
        "sample": j.sample,
        "source": sample_source(j.sample, sample),
        "model": sample.model,
        "variant": sample.variant,
        "label": j.label,
        "judged": JUDGED.get(j.label, j.label),
        "evidence": j.evidence,
        "start": s.start,
        "end": s.end,
        "p": s.p,
    }


def _unjudged(index: int, sample: Sample, block: str) -> dict[str, Any]:
    """A sample no scorer read: its sentence most about the block."""
    span = topical_sentence(block, sample.text)
    start, end = span if span else (None, None)
    return {
        "sample": index,
        "source": sample_source(index, sample),
        "model": sample.model,
        "variant": sample.variant,
        "label": None,
        "judged": JUDGED[None],
        "evidence": sample.text[start:end] if span else "",
        "start": start,
        "end": end,
        "p": None,
    }


def deciding_sentence(block: str, samples: Sequence[Sample]) -> str:
    """The sentence of all ``samples`` sharing most content words with
    ``block`` (the first of equals); "" when no sample has a sentence."""
    words = content_words(block)
    best, most = "", -1
    for sample in samples:
        span = topical_sentence(block, sample.text)
        if span is None:
            continue
        sentence = sample.text[span[0] : span[1]]
        shared = len(words & content_words(sentence))
        if shared > most:
            best, most = sentence, shared
    return best


def silver_examples(
    items: Sequence[tuple[str, Item]],
    *,
    seed: int,
    per_item: int = SENTENCES_PER_ITEM,
) -> list[Example]:
    """Supported and unsupported (sample sentence, block-like) pairs from the
    samples themselves.

    Of up to ``per_item`` sample sentences (five words or more) of each
    item, the sentence is supported by itself, and not by itself with a name
    or number swapped for another of the item's own (its samples and its
    response: "Brandeis" for "Berkeley", the contradiction the judge must
    see), or, with none to swap, with an auxiliary negated. One positive
    and one negative a sentence, grouped by the item's document.

    Args:
        items: ``(document id, item)`` pairs.
        seed: makes the draw repeatable.
        per_item: sample sentences drawn per item.
    """
    rng = random.Random(seed)
    out = []
    for document_id, item in items:
        pool: dict[str, list[str]] = {}
        sentences = []
        for text in (item.response, *(s.text for s in item.samples)):
            for kind, value in entities(text):
                pool.setdefault(kind, []).append(value)
        for sample in item.samples:
            for a, b in sentence_spans(sample.text):
                sentence = sample.text[a:b]
                if len(_WORDS.findall(sentence)) >= 5 and sentence not in sentences:
                    sentences.append(sentence)
        for sentence in rng.sample(sentences, min(per_item, len(sentences))):
            swapped = swap_entity(sentence, pool, rng, avoid=sentence)
            turned = swapped if swapped is not None else negate(sentence, rng)
            if turned is None:
                continue
            out.append(Example(sentence, sentence, True, document_id, "silver:copy"))
            source = "silver:swapped" if swapped is not None else "silver:negated"
            out.append(Example(sentence, turned, False, document_id, source))
    return out

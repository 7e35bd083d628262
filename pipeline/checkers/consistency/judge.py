"""Judging each block of the response against each sample (paper 2.4).

:class:`LLMJudge` asks a judge model per block and sample (Figure 7) or per
sample for every block at once (Figure 8). An answer that cannot be read is
UNKNOWN, weighing nothing, and says why in its evidence: one bad answer
never stops a run. :class:`NLIJudge` judges offline with an NLI scorer.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from functools import partial
from typing import Protocol

from ...llm import parse_json
from ...score import Scorer
from ..sentences import sentence_spans
from .calls import CallLedger, Tally, gather
from .items import Item, Judgement, JudgementLabel
from .models import ModelSpec
from .prompts import Prompts, UnusableAnswer, render, tag_text

Span = tuple[int, int]
#: The judge's words and the labels they stand for.
ANSWERS: dict[str, JudgementLabel] = {
    "yes": "ACCURATE",
    "no": "CONTRADICTION",
    "neutral": "NEUTRAL",
}
_ANSWER = re.compile(r"\W*(yes|no|neutral)\b", re.IGNORECASE)


@dataclass(frozen=True)
class SentenceJudgement:
    """An offline judgement with what decided it: the evidence sentence's
    offsets in its sample (None when the sample has no sentence) and the
    scorer's p(supported) of the block given that sentence."""

    judgement: Judgement
    start: int | None
    end: int | None
    p: float | None


class Judge(Protocol):
    def judge(
        self,
        item: Item,
        spans: Sequence[Span],
        *,
        pool: Executor,
        tally: Tally | None = None,
    ) -> list[tuple[Judgement, ...]]:
        """For each block (``spans`` in ``item.response``), one judgement
        per sample of ``item``, in sample order."""
        ...


def answer_label(word: str) -> JudgementLabel | None:
    """The label of a yes / no / neutral answer (its first word), or None."""
    match = _ANSWER.match(word)
    return ANSWERS[match.group(1).lower()] if match else None


def read_judgement(answer: str) -> tuple[JudgementLabel, str]:
    """``(label, evidence)`` from a Figure 7 answer; the evidence is the
    ``<explain>`` text, or for UNKNOWN what is wrong with the answer."""
    try:
        word = tag_text(answer, "answer")
    except UnusableAnswer as e:
        return "UNKNOWN", f"unusable judge answer: {e}"
    label = answer_label(word)
    if label is None:
        return "UNKNOWN", f"unusable judge answer: <answer> holds {word[:60]!r}"
    try:
        return label, tag_text(answer, "explain")
    except UnusableAnswer:
        return label, ""


def _passage_id(value) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def read_batch_judgements(answer: str, blocks: int) -> list[tuple[JudgementLabel, str]]:
    """``(label, evidence)`` per block from a Figure 8 answer, whose passage
    ids are block indices. A block the answer skips, repeats after its first
    entry or answers with another word is UNKNOWN; so is every block when
    ``<output>`` is missing or holds no JSON list."""
    try:
        value, problem = parse_json(tag_text(answer, "output"), {"type": "array"})
    except UnusableAnswer as e:
        value, problem = None, str(e)
    if problem is not None:
        return [("UNKNOWN", f"unusable batch answer: {problem}")] * blocks
    found: dict[int, tuple[JudgementLabel, str]] = {}
    for entry in value:
        pid = _passage_id(entry.get("id")) if isinstance(entry, dict) else None
        if pid is None or not 0 <= pid < blocks or pid in found:
            continue
        word, explanation = entry.get("answer"), entry.get("explanation")
        label = answer_label(word) if isinstance(word, str) else None
        if label is None:
            found[pid] = ("UNKNOWN", f"unusable batch answer: answer {word!r}")
        else:
            found[pid] = (label, explanation if isinstance(explanation, str) else "")
    missing: tuple[JudgementLabel, str] = (
        "UNKNOWN",
        "unusable batch answer: no entry for this passage",
    )
    return [found.get(i, missing) for i in range(blocks)]


class LLMJudge:
    """The judge model J, one call per block and sample or, with ``batch``,
    one per sample.

    Args:
        spec: the judge model.
        ledger: the run's calls go through it.
        batch: judge every block against a sample in one call (Figure 8).
        prompts: the templates (``judge`` or ``batch_judge`` is used).
    """

    def __init__(
        self,
        spec: ModelSpec,
        ledger: CallLedger,
        *,
        batch: bool = False,
        prompts: Prompts | None = None,
    ):
        self.spec = spec
        self.ledger = ledger
        self.batch = batch
        self.prompts = prompts or Prompts()

    def judge(
        self,
        item: Item,
        spans: Sequence[Span],
        *,
        pool: Executor,
        tally: Tally | None = None,
    ) -> list[tuple[Judgement, ...]]:
        """Judgements per block; raises BudgetExceeded or LLMError when a
        call is refused or fails."""
        blocks = [item.response[a:b] for a, b in spans]
        if self.batch:
            return self._batch(item, blocks, pool, tally)
        requests = [
            render(
                self.prompts.judge,
                prompt=item.prompt,
                full_response=item.response,
                reference=sample.text,
                passage=block,
            )
            for block in blocks
            for sample in item.samples
        ]
        answers = self._ask(requests, pool, tally)
        n = len(item.samples)
        return [
            tuple(Judgement(j, *read_judgement(answers[b * n + j])) for j in range(n))
            for b in range(len(blocks))
        ]

    def _batch(self, item, blocks, pool, tally) -> list[tuple[Judgement, ...]]:
        passages = json.dumps(
            [{"id": i, "text": text} for i, text in enumerate(blocks)],
            ensure_ascii=False,
        )
        requests = [
            render(
                self.prompts.batch_judge,
                prompt=item.prompt,
                reference=sample.text,
                passages=passages,
            )
            for sample in item.samples
        ]
        per_sample = [
            read_batch_judgements(answer, len(blocks))
            for answer in self._ask(requests, pool, tally)
        ]
        return [
            tuple(Judgement(j, *read[b]) for j, read in enumerate(per_sample))
            for b in range(len(blocks))
        ]

    def _ask(self, requests: list[str], pool: Executor, tally) -> list[str]:
        chat = self.ledger.chat
        return gather(
            pool, [partial(chat, self.spec, r, tally=tally) for r in requests]
        )


# Words too common to say what a sentence is about.
_STOPWORDS = frozenset(
    """about after also among and any are been before being between both but
    can could did does doing down during each few for from further had has
    have having her here hers him his how into its itself more most not now
    off once only other our ours out over own same she should some such than
    that the their theirs them then there these they this those through too
    under until very was were what when where which while who whom why will
    with would you your yours""".split()
)
_WORD = re.compile(r"[^\W_]+")


def content_words(text: str) -> set[str]:
    """Lower-cased words of three letters or more, or with a digit, that are
    not stop words: what a sentence is about."""
    return {
        w
        for w in (m.group().lower() for m in _WORD.finditer(text))
        if (len(w) >= 3 or any(c.isdigit() for c in w)) and w not in _STOPWORDS
    }


def topical_sentence(block: str, text: str) -> Span | None:
    """``(start, end)`` of the sentence of ``text`` sharing most content words
    with ``block`` (the first of equals): the one a judge reads the block
    against when no scorer says which supports it. None when ``text`` is
    blank."""
    words = content_words(block)
    spans = sentence_spans(text)
    if not spans:
        return None
    return max(spans, key=lambda s: len(words & content_words(text[s[0] : s[1]])))


class NLIJudge:
    """Judges offline: the NLI scorer reads each sentence of a sample as the
    premise and the block as the hypothesis.

    ACCURATE when the best p(supported) reaches ``scorer.threshold``, with
    that sentence as evidence. Otherwise the sample sentence sharing most
    content words with the block (:func:`content_words`; ties to the higher
    p) decides: CONTRADICTION when it shares at least ``min_overlap`` of the
    block's content words, so it is about the same thing, *and* has a content
    word of its own, so it says something else about it ("Berkeley" against
    "Brandeis"); NEUTRAL when not, as the sample does not address the block.
    That sentence is the evidence. A paraphrase the scorer misses and that
    adds a word reads as a contradiction: the rule is a lexical stand-in for
    the judge model's reading, and a trained scorer makes it rarer.

    Args:
        scorer: any :class:`~pipeline.score.Scorer` (``NLIScorer``).
        min_overlap: share of the block's content words the deciding
            sentence must share to count as about the same thing.
    """

    def __init__(self, scorer: Scorer, *, min_overlap: float = 0.5):
        self.scorer = scorer
        self.min_overlap = min_overlap
        # One model, many items at once: score one item's pairs at a time.
        self._lock = threading.Lock()

    def judge(
        self,
        item: Item,
        spans: Sequence[Span],
        *,
        pool: Executor | None = None,
        tally: Tally | None = None,
    ) -> list[tuple[Judgement, ...]]:
        """Judgements per block; no LLM call (``pool`` and ``tally`` unused)."""
        return [
            tuple(s.judgement for s in row) for row in self.judge_sentences(item, spans)
        ]

    def judge_sentences(
        self, item: Item, spans: Sequence[Span]
    ) -> list[tuple[SentenceJudgement, ...]]:
        """As :meth:`judge`, each judgement with its evidence sentence's
        offsets in the sample and the scorer's p(supported) for it."""
        blocks = [item.response[a:b] for a, b in spans]
        sentences = [sentence_spans(s.text) for s in item.samples]
        pairs = [
            (sample.text[a:b], block)
            for block in blocks
            for sample, ss in zip(item.samples, sentences, strict=True)
            for a, b in ss
        ]
        with self._lock:
            scores = iter(self.scorer.score_pairs(pairs) if pairs else [])
        out = []
        for block in blocks:
            words = content_words(block)
            row = []
            for j, (sample, ss) in enumerate(zip(item.samples, sentences, strict=True)):
                scored = [(sample.text[a:b], float(next(scores))) for a, b in ss]
                label, k = self._decide(words, scored)
                if k is None:
                    judged = SentenceJudgement(
                        Judgement(j, label, ""), start=None, end=None, p=None
                    )
                else:
                    (a, b), (sentence, p) = ss[k], scored[k]
                    judged = SentenceJudgement(Judgement(j, label, sentence), a, b, p)
                row.append(judged)
            out.append(tuple(row))
        return out

    def _decide(
        self, words: set[str], scored: list[tuple[str, float]]
    ) -> tuple[JudgementLabel, int | None]:
        """The label and the index of the sentence that decides it."""
        if not scored:
            return "NEUTRAL", None
        order = range(len(scored))
        best = max(order, key=lambda i: scored[i][1])
        if scored[best][1] >= self.scorer.threshold:
            return "ACCURATE", best
        overlap = [len(words & content_words(sentence)) for sentence, _ in scored]
        topical = max(order, key=lambda i: (overlap[i], scored[i][1]))
        theirs = content_words(scored[topical][0])
        about = bool(words) and len(words & theirs) / len(words) >= self.min_overlap
        return ("CONTRADICTION" if about and theirs - words else "NEUTRAL"), topical

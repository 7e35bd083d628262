"""Silver pairs made from the contexts themselves, so the scorer learns
support rather than the shape of an answer.

HaluEval QA's right answers are short spans and its hallucinated ones full
sentences: a scorer trained on them alone learns length. Each context
sentence therefore yields long claims of both kinds (the sentence or its
first clause is supported; the sentence with an entity or number swapped,
an auxiliary negated, or another item's sentence is not), each distinct
context a document-level twin (:mod:`..passage_pairs`: sentences fused or
summarised, a clause appended from another context, a pronoun or two roles
swapped), and each labelled short answer a short unsupported twin (the
answer swapped for another name or number of its context).
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Sequence
from dataclasses import replace

from ..base import Example
from ..passage_pairs import passage_pairs
from ..perturb import entities, negate, shortened, swap_entity
from .check import CLAIM_PROMPT, Unit, context_units, render_claim
from .items import RagItem

#: Context sentences drawn per item (the rest are only read as premises).
SENTENCES_PER_ITEM = 2
_WORDS = re.compile(r"\w+")


def item_group(item: RagItem) -> str:
    """What keeps items on one side of a validation split: items with the
    same contexts (a question's right and hallucinated answers) are one.
    A content digest, not Python's salted ``hash()``: the split must be the
    same in every process for a comparison of two trainings to mean anything."""
    digest = hashlib.sha256()
    for c in item.contexts:
        digest.update(c.text.encode("utf-8", "surrogatepass") + b"\x00")
    return digest.hexdigest()[:16]


def silver_examples(
    items: Sequence[RagItem],
    *,
    seed: int,
    claim_prompt: str = CLAIM_PROMPT,
    per_item: int = SENTENCES_PER_ITEM,
) -> list[Example]:
    """Supported and unsupported (premise, claim) pairs from every distinct
    context of ``items``.

    Args:
        items: their contexts give the sentences; a labelled supported item
            with a short answer found in its context also gives a swapped
            short answer.
        seed: makes the draw repeatable.
        claim_prompt: as the check renders claims.
        per_item: context sentences turned into claims per distinct context.
    """
    rng = random.Random(seed)
    groups: dict[str, tuple[RagItem, list[Unit]]] = {}
    for item in items:
        groups.setdefault(item_group(item), (item, context_units(item, split=True)))
    pool: dict[str, list[str]] = {}
    sentences = []
    for group, (_, units) in groups.items():
        for u in units:
            sentences.append((group, u.text))
            for kind, value in entities(u.text):
                pool.setdefault(kind, []).append(value)
    out = []
    for group, (item, units) in groups.items():
        usable = [j for j, u in enumerate(units) if len(_WORDS.findall(u.text)) >= 5]
        for j in rng.sample(usable, min(per_item, len(usable))):
            out.extend(
                _sentence_examples(
                    item, units, j, group, pool, sentences, rng, claim_prompt
                )
            )
    texts = [(g, " ".join(u.text for u in units)) for g, (_, units) in groups.items()]
    for e in passage_pairs(texts, seed=seed, per_passage=1, source="silver"):
        claim = _claim(groups[e.document_id][0], e.hypothesis, rng, claim_prompt)
        out.append(replace(e, hypothesis=claim))
    by_question: dict[tuple[str, str], dict[str, RagItem]] = {}
    for item in items:
        units = groups[item_group(item)][1]
        out.extend(_short_answer_examples(item, units, pool, rng, claim_prompt))
        if item.label is not None and item.query:
            key = (item_group(item), item.query)
            by_question.setdefault(key, {})[item.label] = item
    for pair in by_question.values():
        if len(pair) == 2:
            units = groups[item_group(pair["supported"])][1]
            out.extend(_corrected_examples(pair, units, rng, claim_prompt))
    return out


def _window(units: Sequence[Unit], j: int, rng: random.Random) -> str:
    """The premise a check would build around sentence ``j``: it alone, or
    with its neighbours in document order."""
    if rng.random() < 0.3:
        return units[j].text
    lo, hi = max(0, j - rng.randint(0, 1)), min(len(units), j + 1 + rng.randint(0, 1))
    return " ".join(u.text for u in units[lo:hi])


def _claim(item: RagItem, text: str, rng: random.Random, prompt: str) -> str:
    query = item.query if item.query and rng.random() < 0.5 else ""
    return render_claim(prompt, query, text)


def _sentence_examples(item, units, j, group, pool, sentences, rng, prompt):
    sentence = units[j].text
    premise = _window(units, j, rng)
    out = [
        Example(
            premise,
            _claim(item, shortened(sentence, rng), rng, prompt),
            True,
            group,
            "silver:sentence",
        )
    ]
    false = None
    how = rng.random()
    if how < 0.3:
        # Every word of the claim is in the premise, in the wrong place:
        # what a word-overlap score cannot see.
        context = " ".join(u.text for u in units)
        local = {}
        for kind, value in entities(context):
            local.setdefault(kind, []).append(value)
        false, name = swap_entity(sentence, local, rng), "swap_inside"
    elif how < 0.55:
        false, name = swap_entity(sentence, pool, rng, avoid=premise), "swap"
    elif how < 0.75:
        false, name = negate(sentence, rng), "negation"
    if false is None:
        others = [rng.choice(sentences) for _ in range(4)]
        false = next((t for g, t in others if g != group), None)
        name = "unrelated"
    if false is None:
        return out
    out.append(
        Example(
            premise, _claim(item, false, rng, prompt), False, group, f"silver:{name}"
        )
    )
    return out


def _short_answer_examples(item, units, pool, rng, prompt):
    """A labelled right short answer yields a same-shaped wrong one: another
    name or number of the sentence that holds the answer (else of the
    context, else of any context)."""
    answer = item.answer.strip().rstrip(".")
    if item.label != "supported" or not item.query or len(answer.split()) > 5:
        return []
    folded = answer.lower()
    j = next((j for j, u in enumerate(units) if folded in u.text.lower()), None)
    if j is None:
        return []
    kind = next((k for k, _ in entities(answer)), "name")
    near = [units[j].text, " ".join(u.text for u in units)]
    options = [
        v
        for text in near
        for k, v in entities(text)
        if k == kind and v.lower() not in folded and folded not in v.lower()
    ] or [v for v in pool.get(kind, ()) if v.lower() != folded]
    if not options:
        return []
    premise = _window(units, j, rng)
    claim = render_claim(prompt, item.query, rng.choice(options[:8]))
    return [Example(premise, claim, False, item_group(item), "silver:short_answer")]


def _corrected_examples(pair, units, rng, prompt):
    """A hallucinated sentence answer with its wrong name or number put
    right: a supported claim of the same shape and length as the
    hallucinated one, so the two differ only in what the context says.

    The wrong entity is the one of the right answer's kind that the context
    does not hold; without exactly one such, nothing is made.
    """
    right, wrong = pair["supported"], pair["hallucinated"]
    answer = right.answer.strip().rstrip(".")
    if len(answer.split()) > 5 or answer.lower() in ("yes", "no"):
        return []
    context = " ".join(u.text for u in units).lower()
    kind = next((k for k, _ in entities(answer)), "name")
    strays = [
        v
        for k, v in entities(wrong.answer)
        if k == kind and v.lower() not in context and v.lower() != answer.lower()
    ]
    if len(set(strays)) != 1:
        return []
    fixed = wrong.answer.replace(strays[0], answer)
    j = next((j for j, u in enumerate(units) if answer.lower() in u.text.lower()), 0)
    return [
        Example(
            _window(units, j, rng),
            render_claim(prompt, right.query, fixed),
            True,
            item_group(right),
            "silver:corrected",
        )
    ]

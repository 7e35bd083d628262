"""Document-level consistency pairs made from text that may be trained on
(as FactCC, Falsesum, AlignScore and MiniCheck build theirs): claims a
passage supports and claims it does not, so that a scorer learns support
beyond one sentence before its first label.

Supported claims: a sentence kept whole or compressed (a part it still says
something without dropped), two sentences sharing an entity fused into one,
a two-sentence summary of two compressed sentences. Each unsupported claim
is one of these with one error (:data:`ERROR_KINDS`) and comes beside a
supported twin of about its length, so that length and wording say nothing:
only what the passage says does.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from .base import Example
from .perturb import entities, negate, replaced, shortened
from .sentences import sentence_spans

#: One unsupported claim per kind: an entity, number or date swapped for
#: another of the same passage, an entity from another passage, a clause
#: appended from another passage (XSum's commonest error), a negation, a
#: pronoun of the other gender, subject and object swapped.
ERROR_KINDS = (
    "entity_swap",
    "number_swap",
    "date_swap",
    "outside_entity",
    "appended_clause",
    "negation",
    "pronoun_swap",
    "role_swap",
)
#: A premise is a window of sentences around the claim's of at most this
#: many words (a check reads long passages in chunks of about this size).
CHUNK_WORDS = 90
_WORDS = re.compile(r"\w+")
#: The error a swap of each entity kind (of :func:`~.perturb.entities`) makes.
_ERROR_OF_KIND = {
    "name": "entity_swap",
    "number": "number_swap",
    "year": "date_swap",
    "month": "date_swap",
}
_PRONOUNS = {"he": "she", "she": "he", "his": "her", "her": "his", "him": "her"}
_PRONOUN = re.compile(r"\b(?:he|she|his|her|him)\b", re.IGNORECASE)
_FIRST_CLAUSE = re.compile(r"^[^,;:]{20,}?(?=[,;:]\s)")
# Page markers, footnote marks and citations ("153 A.3d 1006", "Id., at
# 305") say nothing a claim could: sentences holding them are passed over.
_APPARATUS = re.compile(r"[\[\]§]|\bId\.|\b\d+ [A-Z][\w.]*(?: \d?[a-z]+\.?)? \d+")
# Openers that are not names, lower-cased when a clause follows ", and".
_COMMON_OPENERS = frozenset(
    "a an the this that these those it its in on at as after before during"
    " since by from for with when while although if once we he she they i"
    " his her their our there here some many most all each both one two three"
    " nine no not nonetheless however moreover furthermore therefore thus"
    " accordingly additionally finally instead".split()
)


def passage_pairs(
    passages: Sequence[tuple[str, str]],
    *,
    seed: int,
    per_passage: int = 2,
    source: str = "passage",
) -> list[Example]:
    """Supported and unsupported (premise, claim) pairs, in twins.

    Args:
        passages: ``(group, text)``: a group (a document's id) keeps its
            pairs on one side of a validation split.
        seed: makes the draw repeatable.
        per_passage: claims drawn per passage (each gives a twin of pairs).
        source: the examples' source prefix (``passage:<kind>``).
    """
    rng = random.Random(seed)
    split = [(group, _sentences(text)) for group, text in passages]
    split = [(g, s) for g, s in split if s]
    outside: list[str] = []  # every name, for swaps from outside a passage
    clauses: list[tuple[str, str]] = []
    for group, sentences in split:
        for s in sentences:
            clauses.append((group, _clause(s)))
            outside += [value for kind, value in entities(s) if kind == "name"]
    out: list[Example] = []
    for group, sentences in split:
        anchors = rng.sample(range(len(sentences)), min(per_passage, len(sentences)))
        for j in anchors:
            premise, window = _window(sentences, j)
            claim = _supported(sentences, j, window, rng)
            read = [sentences[k] for k in sorted(window)]
            twin = _twin(claim, premise, read, group, outside, clauses, rng)
            if twin is None:
                continue
            supported, unsupported, kind = twin
            out.append(Example(premise, supported, True, group, f"{source}:supported"))
            out.append(Example(premise, unsupported, False, group, f"{source}:{kind}"))
    return out


def _sentences(text: str) -> list[str]:
    """Sentences of 5 to 60 words without citations or page markers
    (headings, lists and apparatus are left out)."""
    out = []
    for start, end in sentence_spans(text):
        s = " ".join(text[start:end].split())
        if 5 <= len(_WORDS.findall(s)) <= 60 and not _APPARATUS.search(s):
            out.append(s)
    return out


def _window(sentences: list[str], j: int) -> tuple[str, list[int]]:
    """The sentences around ``j`` that fit in :data:`CHUNK_WORDS`, j first."""
    chosen = [j]
    words = len(sentences[j].split())
    lo, hi = j - 1, j + 1
    while lo >= 0 or hi < len(sentences):
        for k in (hi, lo):
            if 0 <= k < len(sentences) and k not in chosen:
                n = len(sentences[k].split())
                if words + n <= CHUNK_WORDS:
                    chosen.append(k)
                    words += n
        lo, hi = lo - 1, hi + 1
        if words >= CHUNK_WORDS * 0.8:
            break
    return " ".join(sentences[k] for k in sorted(chosen)), chosen


def _supported(sentences, j, window, rng) -> str:
    """Sentence ``j`` compressed, or fused with a window sentence that
    shares an entity with it, or summarised with another window sentence."""
    sentence = sentences[j]
    how = rng.random()
    others = [k for k in window if k != j]
    if how < 0.5 or not others:
        return shortened(sentence, rng)
    names = {v for _, v in entities(sentence)}
    sharing = [k for k in others if names & {v for _, v in entities(sentences[k])}]
    if how < 0.75 and sharing:
        k = rng.choice(sharing)
        return f"{sentence.rstrip('.!?')}, and {_lowered(_clause(sentences[k]))}."
    k = rng.choice(others)
    first, second = sorted((j, k))
    return f"{_clause(sentences[first])}. {_clause(sentences[second])}."


def _twin(claim, premise, read, group, outside, clauses, rng):
    """(supported, unsupported, error kind) or None: the kinds are tried in
    a random order, the first that applies wins. ``read`` holds the
    premise's sentences."""
    makers = {
        "entity_swap": lambda: _swap(claim, premise, "entity_swap", rng),
        "number_swap": lambda: _swap(claim, premise, "number_swap", rng),
        "date_swap": lambda: _swap(claim, premise, "date_swap", rng),
        "outside_entity": lambda: _outside(claim, premise, outside, rng),
        "negation": lambda: negate(claim, rng),
        "pronoun_swap": lambda: _pronoun_swap(claim),
        "role_swap": lambda: _role_swap(claim),
    }
    for kind in rng.sample(ERROR_KINDS, len(ERROR_KINDS)):
        if kind == "appended_clause":
            made = _appended(claim, read, group, clauses, rng)
        else:
            false = makers[kind]()
            made = None if false is None or false == claim else (claim, false)
        if made is not None:
            return (*made, kind)
    return None


def _swap(claim: str, premise: str, error: str, rng) -> str | None:
    """An entity of the claim swapped for another of the passage, of the
    same kind and error (a name, a number, a date)."""
    found = [(k, v) for k, v in entities(claim) if _ERROR_OF_KIND[k] == error]
    local = [(k, v) for k, v in entities(premise) if _ERROR_OF_KIND[k] == error]
    rng.shuffle(found)
    for kind, value in found:
        options = [v for k, v in local if k == kind and v.lower() not in claim.lower()]
        if options:
            return replaced(claim, value, rng.choice(options))
    return None


def _outside(claim: str, premise: str, outside, rng) -> str | None:
    """A name of the claim swapped for one no sentence of the passage holds."""
    names = [v for k, v in entities(claim) if k == "name"]
    folded = premise.lower()
    for value in rng.sample(names, len(names)):
        for new in rng.sample(outside, min(8, len(outside))):
            if new.lower() not in folded:
                return replaced(claim, value, new)
    return None


def _appended(claim, read, group, clauses, rng) -> tuple[str, str] | None:
    """The claim with a clause of the premise's sentences (``read``) appended
    (supported) and with one of another passage's of about that length
    (unsupported)."""
    own = [c for c in map(_clause, read) if c.lower() not in claim.lower()]
    if not own:
        return None
    mine = rng.choice(own)
    near = [c for g, c in rng.sample(clauses, min(30, len(clauses))) if g != group]
    if not near:
        return None
    theirs = min(near, key=lambda c: abs(len(c) - len(mine)))
    stem = claim.rstrip(".!?")
    return f"{stem}, and {_lowered(mine)}.", f"{stem}, and {_lowered(theirs)}."


def _pronoun_swap(claim: str) -> str | None:
    m = _PRONOUN.search(claim)
    if m is None:
        return None
    word = _PRONOUNS[m.group().lower()]
    if m.group()[0].isupper():
        word = word.capitalize()
    return claim[: m.start()] + word + claim[m.end() :]


def _role_swap(claim: str) -> str | None:
    """The first two different names of the claim trade places."""
    names: list[str] = []
    for kind, value in entities(claim):
        if kind == "name" and all(value not in n and n not in value for n in names):
            names.append(value)
    if len(names) < 2:
        return None
    a, b = names[:2]
    at_a, at_b = claim.find(a), claim.find(b)
    if at_a > at_b:
        (a, at_a), (b, at_b) = (b, at_b), (a, at_a)
    return claim[:at_a] + b + claim[at_a + len(a) : at_b] + a + claim[at_b + len(b) :]


def _clause(sentence: str) -> str:
    """The sentence's first clause when it has one of 20+ characters, else
    the sentence, without its closing stop."""
    m = _FIRST_CLAUSE.match(sentence)
    return (m.group() if m else sentence).rstrip(".!?")


def _lowered(text: str) -> str:
    """Lower-case the opening word when it is a common opener, not a name."""
    first = text.split(" ", 1)[0]
    if first.lower() in _COMMON_OPENERS and first != "I":
        return text[0].lower() + text[1:]
    return text

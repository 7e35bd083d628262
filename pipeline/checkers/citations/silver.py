"""Silver pairs that teach the scorer to read a proposition against an
opinion passage before any expert label: a sentence of the passage is
supported by it; the same sentence with its holding turned (a negation
flipped, an outcome swapped for its opposite) is not, nor is the sentence
of another opinion that shares the most words with the passage."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from ..base import Example
from ..perturb import negatable, negate
from .checks import CaseLaw
from .restatement import OPPOSITES
from .sources import Opinion

_WORD = re.compile(r"[A-Za-z]+")
_SENTENCE = re.compile(r"(?<=[.?!])\s+(?=[A-Z])")
_PER_OPINION = 12


def turn(sentence: str, rng: random.Random) -> str | None:
    """The sentence with its meaning reversed: one outcome word swapped for
    its opposite, or one auxiliary negated (or un-negated); None if it has
    neither."""
    words = [m for m in _WORD.finditer(sentence) if m.group().lower() in OPPOSITES]
    if words and (not negatable(sentence) or rng.random() < 0.5):
        m = rng.choice(words)
        new = OPPOSITES[m.group().lower()]
        if m.group()[0].isupper():
            new = new[0].upper() + new[1:]
        return sentence[: m.start()] + new + sentence[m.end() :]
    return negate(sentence, rng)


def proposition_examples(
    opinions: Sequence[Opinion], caselaw: CaseLaw, *, seed: int
) -> list[Example]:
    """Supported and unsupported (passage, proposition) pairs from the
    passages of ``opinions``, grouped by opinion for validation."""
    rng = random.Random(seed)
    pools = []
    for o in opinions:
        passages = [p for p in caselaw.passages(o).passages if not p.in_syllabus]
        rng.shuffle(passages)
        pools.append((o, passages[:_PER_OPINION]))
    sentences = [
        (o.id, s)
        for o, passages in pools
        for p in passages
        for s in _SENTENCE.split(p.text)
        if 8 <= len(s.split()) <= 45
    ]
    out: list[Example] = []
    for o, passages in pools:
        for p in passages:
            own = [s for s in _SENTENCE.split(p.text) if 8 <= len(s.split()) <= 45]
            if not own:
                continue
            s = rng.choice(own)
            out.append(Example(p.text, s, True, o.id, "silver:quote"))
            turned = turn(s, rng)
            if turned:
                out.append(Example(p.text, turned, False, o.id, "silver:turned"))
            others = [t for oid, t in sentences if oid != o.id]
            if others:
                other = max(
                    rng.sample(others, min(20, len(others))), key=_overlap(p.text)
                )
                out.append(Example(p.text, other, False, o.id, "silver:other_case"))
    return out


def _overlap(passage: str):
    words = set(w.lower() for w in _WORD.findall(passage))
    return lambda s: len(words & set(w.lower() for w in _WORD.findall(s)))

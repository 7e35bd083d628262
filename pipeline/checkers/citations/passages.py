"""The passages of an opinion most likely to hold a proposition, for the
scorer to read: the syllabus (the reporter's statement of the holding)
where there is one, then the opinion's passages that share the most
distinctive words with the proposition."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from .sources import Opinion

_WORD = re.compile(r"[a-z][a-z']+")
_SENTENCE = re.compile(r"(?<=[.?!])[”\"’)]*\s+(?=[“\"‘(]?[A-Z])")
_STOP = frozenset(
    "the of and a an to in that is was for on as by with be it this are or not "
    "at from which its has have had but their were been such any may shall would "
    "there than these those under court".split()
)
# Sentences per passage: enough context for a holding, short enough for the
# scorer's 256-token window.
_PASSAGE_SENTENCES = 2
_MAX_PASSAGE_CHARS = 600


@dataclass(frozen=True)
class Passage:
    """A passage of an opinion; ``start``/``end`` index its text, or are None
    for a passage of the syllabus."""

    text: str
    start: int | None
    end: int | None
    in_syllabus: bool = False


class PassageIndex:
    """An opinion cut into passages with their word weights, built once per
    opinion."""

    def __init__(self, opinion: Opinion):
        self.passages: list[Passage] = []
        if opinion.syllabus:
            self.passages += [
                Passage(t, None, None, in_syllabus=True)
                for t, _, _ in _chunks(opinion.syllabus)
            ]
        self.passages += [Passage(t, s, e) for t, s, e in _chunks(opinion.text)]
        self._words = [Counter(_words(p.text)) for p in self.passages]
        df = Counter(w for c in self._words for w in c)
        n = len(self.passages)
        self._idf = {w: math.log(1 + n / d) for w, d in df.items()}

    def best(self, proposition: str, *, k: int) -> list[Passage]:
        """The ``k`` passages sharing the most distinctive words with the
        proposition, best first; the best syllabus passage is always one."""
        query = set(_words(proposition))
        scored = []
        for i, counts in enumerate(self._words):
            s = sum(self._idf.get(w, 0.0) for w in query if w in counts)
            scored.append((s / math.sqrt(1 + len(counts)), i))
        scored.sort(reverse=True)
        chosen = [i for _, i in scored[:k]]
        syllabus = [i for _, i in scored if self.passages[i].in_syllabus]
        if syllabus and syllabus[0] not in chosen:
            chosen = chosen[: k - 1] + [syllabus[0]]
        return [self.passages[i] for i in chosen]


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP]


def _chunks(text: str):
    """Runs of a few sentences, with their offsets."""
    bounds = [0] + [m.end() for m in _SENTENCE.finditer(text)] + [len(text)]
    i = 0
    while i < len(bounds) - 1:
        j = min(i + _PASSAGE_SENTENCES, len(bounds) - 1)
        start, end = bounds[i], bounds[j]
        if end - start > _MAX_PASSAGE_CHARS and j > i + 1:
            j, end = i + 1, bounds[i + 1]
        chunk = text[start:end].strip()
        if len(chunk) > 40:
            lead = len(text[start:end]) - len(text[start:end].lstrip())
            yield (
                chunk[:_MAX_PASSAGE_CHARS],
                start + lead,
                start + lead + min(len(chunk), _MAX_PASSAGE_CHARS),
            )
        i = j

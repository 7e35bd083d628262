"""Contexts a fake LLM copies from a document: a window of words around an
entity, copied exactly or mistranscribed in one of the safe ways."""

from __future__ import annotations

import random
import re
from bisect import bisect_right
from dataclasses import dataclass

from .builder import Mention, ocr_cut
from .lexicon import BACK_TRANSLATIONS, TRANSLATIONS


class Words:
    """A text's words (runs of non-space) and where each one is."""

    def __init__(self, text: str):
        self.text = text
        self.spans = [m.span() for m in re.finditer(r"\S+", text)]
        self.starts = [s for s, _ in self.spans]

    def index(self, pos: int) -> int:
        return max(bisect_right(self.starts, pos) - 1, 0)


@dataclass
class Window:
    first: int  # word indices, inclusive
    last: int
    ent_first: int
    ent_last: int


def window(words: Words, m: Mention, rng: random.Random) -> Window:
    """The entity plus one or two neighbouring words, 15 to 120 characters."""
    cue = words.index(m.cue_start)
    ent_first, ent_last = words.index(m.start), words.index(m.end - 1)
    first = max(min(cue, ent_first) - rng.choice((0, 1, 1, 2)), 0)
    last = min(ent_last + rng.choice((0, 0, 1, 2)), len(words.spans) - 1)
    if cue == ent_first and first == ent_first and ent_first > 0:
        first -= 1

    def length(a: int, b: int) -> int:
        return words.spans[b][1] - words.spans[a][0]

    while length(first, last) > 120 and last > ent_last:
        last -= 1
    while length(first, last) > 120 and first < ent_first:
        first += 1
    while length(first, last) < 15:
        if last + 1 < len(words.spans):
            last += 1
        elif first > 0:
            first -= 1
        else:
            break
    return Window(first, last, ent_first, ent_last)


def span_text(words: Words, first: int, last: int) -> str:
    return words.text[words.spans[first][0] : words.spans[last][1]]


def _drop_words(words: Words, w: Window, run: int, rng: random.Random) -> str | None:
    """Leave out ``run`` interior words outside the entity."""
    options = [
        i
        for i in range(w.first + 1, w.last - run + 1)
        if i + run - 1 < w.ent_first or i > w.ent_last
    ]
    rng.shuffle(options)
    total = words.spans[w.last][1] - words.spans[w.first][0]
    for i in options:
        gap = words.spans[i + run - 1][1] - words.spans[i][0]
        if gap <= 0.5 * (total - gap):
            left = words.text[words.spans[w.first][0] : words.spans[i][0]].rstrip()
            right = words.text[words.spans[i + run - 1][1] : words.spans[w.last][1]]
            return left + " " + right.lstrip()
    return None


def mistranscribe(
    kind: str, words: Words, w: Window, m: Mention, rng: random.Random
) -> str | None:
    """The context of ``kind``, or ``None`` when it does not apply here."""
    exact = span_text(words, w.first, w.last)
    if kind == "exact":
        return exact
    if kind == "case":
        changed = rng.choice((str.lower, str.lower, str.upper, str.title))(exact)
        return changed if changed != exact else exact.swapcase()
    if kind == "ocr_split":
        start = words.spans[w.first][0]
        if m.ocr_at is not None and start < m.ocr_at < start + len(exact):
            return exact[: m.ocr_at - start] + exact[m.ocr_at - start + 1 :]
        if rng.random() < 0.3 and w.last > w.first:
            spaces = [i for i, ch in enumerate(exact) if ch == " "]
            i = rng.choice(spaces) if spaces else None
            return None if i is None else exact[:i] + exact[i + 1 :]
        cut = ocr_cut(exact, rng)
        return None if cut is None else exact[:cut] + " " + exact[cut:]
    if kind == "inserted_tokens":
        if w.last - w.first < 2:
            w = Window(max(w.first - 1, 0), w.last, w.ent_first, w.ent_last)
        return _drop_words(words, w, 1, rng)
    if kind == "elided_tokens":
        cue = words.index(m.cue_start)
        if cue < w.ent_first - 2:  # skip what lies between the cue and the entity
            gap = w.ent_first - cue - 1
            wide = Window(cue, w.last, w.ent_first, w.ent_last)
            dropped = _drop_words(words, wide, gap, rng)
            if dropped is not None:
                return dropped
        first = max(w.first - 3, 0)
        return _drop_words(
            words,
            Window(first, w.last, w.ent_first, w.ent_last),
            rng.choice((2, 3)),
            rng,
        )
    if kind == "translation":
        tokens = list(re.finditer(r"[^\W\d_]+", exact))
        rng.shuffle(tokens)
        for t in tokens:
            word = t.group()
            other = TRANSLATIONS.get(word.lower()) or BACK_TRANSLATIONS.get(
                word.lower()
            )
            if other:
                if word[0].isupper():
                    other = other.upper() if word.isupper() else other.capitalize()
                if len(word) <= 0.25 * len(exact):
                    return exact[: t.start()] + other + exact[t.end() :]
        return None
    if kind == "whitespace":
        for first in range(w.first, max(w.first - 4, -1), -1):
            text = span_text(words, first, w.last)
            if len(text) <= 130 and re.search(r"\n|\t|  ", text):
                return " ".join(text.split())
        return None
    raise ValueError(f"unknown kind {kind!r}")

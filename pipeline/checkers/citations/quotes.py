"""Is a quotation in the opinion it is attributed to?

A faithful quotation may skip words (``. . .``), alter letters or insert
words in brackets (``[T]he``, ``[is]``), change capitals and punctuation,
and turn the opinion's quotation marks into single ones. It may not swap a
word: one or two near-synonyms is exactly how a fabricated quotation reads,
so every word outside brackets and ellipses must be the opinion's, in order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...align import DocumentIndex, align_context

_ELLIPSIS = re.compile(r"\s*(?:\.\s?\.\s?\.(?:\s?\.)?|…)\s*")
# A bracketed letter at a word's start changes its case: keep the letter.
_BRACKET_LETTER = re.compile(r"\[([A-Za-z])\](?=\w)")
_BRACKETED = re.compile(r"\[[^\]]*\]")
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
# Where a quotation's words may run in the opinion: no further apart than
# this between two fragments separated by an ellipsis or insertion.
_MAX_GAP = 3000


@dataclass(frozen=True)
class QuoteMatch:
    """Where a quotation was found: ``start``/``end`` into the opinion text
    (from its first to its last quoted word); ``exact`` is False when it was
    not found and the span is only the closest passage."""

    start: int | None
    end: int | None
    exact: bool


class OpinionWords:
    """An opinion's words, lower-cased, with their offsets: built once per
    opinion and searched for every quotation of it."""

    def __init__(self, text: str):
        self.text = text
        spans = [(m.start(), m.end()) for m in _WORD.finditer(text)]
        self.starts = [s for s, _ in spans]
        self.ends = [e for _, e in spans]
        words = [_fold(text[s:e]) for s, e in spans]
        # One space-joined string, and the word index at each of its offsets.
        self.joined = " " + " ".join(words) + " "
        self._word_at: list[int] = []
        for i, w in enumerate(words):
            self._word_at.extend([i] * (len(w) + 1))
        self._index: DocumentIndex | None = None

    def find(self, fragment: list[str], *, after: int = 0) -> list[int]:
        """Word indices where ``fragment`` starts, at or after word
        ``after``."""
        needle = " " + " ".join(fragment) + " "
        out = []
        pos = self.joined.find(needle, self._char_of(after))
        while pos >= 0:
            out.append(self._word_at[pos])
            pos = self.joined.find(needle, pos + 1)
        return out

    def _char_of(self, word: int) -> int:
        if word <= 0:
            return 0
        lo, hi = 0, len(self._word_at)
        while lo < hi:
            mid = (lo + hi) // 2
            if self._word_at[mid] < word:
                lo = mid + 1
            else:
                hi = mid
        return max(0, lo - 1)

    def closest(self, quotation: str) -> QuoteMatch:
        """The passage closest to ``quotation`` (the aligner), as evidence
        of what the opinion says instead."""
        if self._index is None:
            self._index = DocumentIndex(self.text)
        a = align_context(self.text, quotation, index=self._index)
        return QuoteMatch(start=a.start, end=a.end, exact=False)


def _fold(word: str) -> str:
    return word.lower().replace("’", "'")


def fragments(quotation: str) -> list[list[str]]:
    """The quotation's runs of words that must appear verbatim and in order:
    split at ellipses and bracketed insertions, letters altered in brackets
    kept."""
    text = _BRACKET_LETTER.sub(r"\1", quotation)
    out = []
    for part in _ELLIPSIS.split(text):
        for piece in _BRACKETED.split(part):
            words = [_fold(w) for w in _WORD.findall(piece)]
            if words:
                out.append(words)
    return out


def find_quote(opinion: OpinionWords, quotation: str) -> QuoteMatch:
    """Where ``quotation`` lies in the opinion, every fragment in order
    within a few pages of the one before; else the closest passage."""
    parts = fragments(quotation)
    if not parts:
        return QuoteMatch(None, None, exact=False)
    for first in opinion.find(parts[0]):
        end_word = first + len(parts[0]) - 1
        ok = True
        for frag in parts[1:]:
            hits = opinion.find(frag, after=end_word + 1)
            if not hits or opinion.starts[hits[0]] - opinion.ends[end_word] > _MAX_GAP:
                ok = False
                break
            end_word = hits[0] + len(frag) - 1
        if ok:
            return QuoteMatch(opinion.starts[first], opinion.ends[end_word], exact=True)
    return opinion.closest(quotation)

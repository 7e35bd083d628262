"""Sentence spans with offsets: context items and multi-sentence answers
(provenance), answer blocks (consistency).

pysbd does the segmentation. Text scraped from several pages often glues a
sentence to the next with no space ("...19th century.First for Women is"):
such a boundary is split too.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Iterator

# A lower-case letter or digit, a full stop and an upper-case letter that
# starts a word: "century.First". Initials ("U.S.Army") have an upper-case
# letter before the stop and are left alone.
_GLUED = re.compile(r"(?<=[a-z0-9\)\]\"'][.!?])(?=[A-Z][a-z])")

# Where a sentence may end inside a paragraph: a terminator followed by more
# text. A context without one is a single sentence (if it fits a window),
# and pysbd (about a millisecond a sentence) is skipped.
_MAYBE_BOUNDARY = re.compile(r"[.!?;:]+[\"')\]]*\s*\S")

#: The most text pysbd is given at once. pysbd finds each sentence's offsets
#: by searching the whole text it was given, so one long paragraph costs the
#: square of its length (64 KB took 4 s, 128 KB 17 s); a longer paragraph is
#: read in windows of this size, and a sentence longer than a window is cut
#: at a space.
WINDOW_CHARS = 2000
#: Text after a sentence that pysbd must have seen before its end is trusted:
#: a boundary is decided from the next few words ("Dr." then "Smith"), so a
#: sentence ending in a window's last stretch is read again in the next.
_LOOKAHEAD_CHARS = 200
_UP_TO_LAST_SPACE = re.compile(r".*\s", re.DOTALL)


# pysbd keeps the text it is splitting on the segmenter, so threads (the
# consistency checker splits answers concurrently) each get their own.
_LOCAL = threading.local()


def _segmenter():
    if not hasattr(_LOCAL, "segmenter"):
        import pysbd

        _LOCAL.segmenter = pysbd.Segmenter(language="en", clean=False, char_span=True)
    return _LOCAL.segmenter


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence of ``text``, surrounding white space
    excluded; a text with no sentence boundary is one span (none if blank),
    cut at a space when longer than WINDOW_CHARS."""
    return list(iter_sentence_spans(text))


def iter_sentence_spans(text: str) -> Iterator[tuple[int, int]]:
    """:func:`sentence_spans` one at a time, so a caller with a limit stops
    splitting as soon as the limit is passed."""
    for start, end in _pieces(text):
        spans: Iterable[tuple[int, int]]
        if end - start <= WINDOW_CHARS and not _MAYBE_BOUNDARY.search(text, start, end):
            spans = [(start, end)]
        else:
            spans = (
                piece
                for a, b in _windowed(text, start, end)
                for piece in _unglued(text, a, b)
            )
        for a, b in spans:
            stripped = _strip(text, a, b)
            if stripped:
                yield stripped


def _pieces(text: str):
    """Paragraphs (a paragraph break always ends a sentence)."""
    at = 0
    for m in re.finditer(r"\n\s*\n", text):
        yield at, m.start()
        at = m.end()
    yield at, len(text)


def _windowed(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """pysbd's sentences of ``text[start:end]``, read WINDOW_CHARS at a time:
    the sentences ending before a window's last _LOOKAHEAD_CHARS are kept and
    the next window starts where they stop, so each character is read about
    once and the offsets are pysbd's own."""
    at = start
    while at < end:
        stop = min(end, at + WINDOW_CHARS)
        found = [
            (at + s.start, at + s.end) for s in _segmenter().segment(text[at:stop])
        ]
        if stop == end:
            yield from found
            return
        kept = [s for s in found[:-1] if s[1] <= stop - _LOOKAHEAD_CHARS]
        if not kept and len(found) > 1:
            # A sentence of nearly a window: it ended inside it, which is all
            # the look-ahead there is.
            kept = found[:1]
        if kept:
            yield from kept
            at = kept[-1][1]
        else:
            cut = _cut(text, at, stop)
            yield at, cut
            at = cut


def _cut(text: str, start: int, stop: int) -> int:
    """Where to end a sentence longer than a window: after the last white
    space of its second half, else at the window's end."""
    m = _UP_TO_LAST_SPACE.match(text, start + WINDOW_CHARS // 2, stop)
    return m.end() if m else stop


def _unglued(text: str, start: int, end: int):
    at = start
    for m in _GLUED.finditer(text, start, end):
        yield at, m.start()
        at = m.start()
    yield at, end


def _strip(text: str, start: int, end: int) -> tuple[int, int] | None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if start < end else None

"""Sentence spans with offsets: context items and multi-sentence answers
(provenance), answer blocks (consistency).

pysbd does the segmentation. Text scraped from several pages often glues a
sentence to the next with no space ("...19th century.First for Women is"):
such a boundary is split too.
"""

from __future__ import annotations

import re
import threading

# A lower-case letter or digit, a full stop and an upper-case letter that
# starts a word: "century.First". Initials ("U.S.Army") have an upper-case
# letter before the stop and are left alone.
_GLUED = re.compile(r"(?<=[a-z0-9\)\]\"'][.!?])(?=[A-Z][a-z])")

# Where a sentence may end inside a paragraph: a terminator followed by more
# text. A context without one is a single sentence, and pysbd (about a
# millisecond a sentence) is skipped.
_MAYBE_BOUNDARY = re.compile(r"[.!?;:]+[\"')\]]*\s*\S")


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
    excluded; a text with no sentence boundary is one span (none if blank)."""
    spans = []
    for start, end in _pieces(text):
        if not _MAYBE_BOUNDARY.search(text, start, end):
            spans.append((start, end))
            continue
        for s in _segmenter().segment(text[start:end]):
            a, b = start + s.start, start + s.end
            spans.extend(_unglued(text, a, b))
    return [s for s in (_strip(text, a, b) for a, b in spans) if s]


def _pieces(text: str):
    """Paragraphs (pysbd is quadratic on very long inputs, and a paragraph
    break always ends a sentence)."""
    at = 0
    for m in re.finditer(r"\n\s*\n", text):
        yield at, m.start()
        at = m.end()
    yield at, len(text)


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

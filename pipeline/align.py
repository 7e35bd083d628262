"""Align an LLM-copied context to its document (paper section 3.2).

The score is eq. 1, ``s = M / L``: character matches over alignment length.
Unlike the paper's Smith-Waterman, the *whole* context must be aligned: a
global alignment whose end gaps are free on the document side only, so a
fabricated context that shares one word with the document cannot score 1.0
on that word alone. ``L`` runs from the first to the last column that holds a
context character: context characters facing gaps count, document overhang
does not.

Both strings are compared lower-cased with every whitespace run (newlines,
tabs, NBSP) collapsed to one space; offsets are mapped back to code points of
the original document.

:func:`align_full` runs Biopython on the whole document: the reference.
:func:`align_context` gives the same answer much faster: a k-mer index of the
document (:class:`DocumentIndex`, built once per document) proposes a few
windows, Biopython scores them and aligns inside the best one.
"""

from __future__ import annotations

import math

import numpy as np
from Bio.Align import PairwiseAligner

from .types import Alignment

#: Keep a context iff its score reaches this (paper eq. 2).
DEFAULT_THRESHOLD = 0.6

# Scoring scheme, chosen by experiment on Table 2 cases and on copied,
# mistranscribed and invented contexts against caselaw opinions:
# - gaps are affine, so an inserted or elided word becomes one contiguous
#   gap instead of a run of mismatches (linear -1 gaps turned "hearing june
#   19, 2013" against "hearing was held on june 19, 2013" into a
#   mismatch-riddled "held on june 19, 2013");
# - a mismatch (-2) costs more than a match gains, so invented text is not
#   stretched over unrelated characters to collect scattered matches: the
#   aligner prefers gaps, which lengthen L and lower M / L. On a small sample
#   (60 copied, 240 invented contexts) it kept 3.7% of invented ones at 0.6
#   against 5.0% with mismatch -1, and every copied one with both;
# - a one-character gap plus the match it saves (-2.5 + 1) beats a mismatch
#   (-2), so an OCR split "o ctober" keeps its "o" in the span (with gap
#   open -3 the two tie and Biopython drops the "o").
MATCH_SCORE = 1.0
MISMATCH_SCORE = -2.0
GAP_OPEN_SCORE = -2.5
GAP_EXTEND_SCORE = -0.5

# k-mer sizes of the index: long seeds first, short ones for short contexts
# or when a mistranscribed context shares no long seed with the document.
_KMER_SIZES = (8, 4)
_LONG_CONTEXT = 16
# A k-mer seen more often than this in the document votes for nothing.
_MAX_KMER_OCCURRENCES = 256
# Diagonal bins (of width max(16, n / 4)) kept as candidate windows: at
# least 8, more for short contexts, whose seeds are common and whose windows
# cost little to score.
_MIN_WINDOWS = 8
_WINDOW_BUDGET = 1024  # max windows = max(_MIN_WINDOWS, budget / n)
_HASH_BASE = np.uint64(0x100000001B3)
_SPACE = 32
# Every str.isspace() character lies below U+3001, the table's last (False)
# entry, which stands for every character beyond.
_WHITESPACE = np.array([chr(c).isspace() for c in range(0x3002)], dtype=bool)


def _make_aligner() -> PairwiseAligner:
    # Every score is set: Biopython defaults changed between versions.
    aligner = PairwiseAligner()
    aligner.mode = "global"
    aligner.match_score = MATCH_SCORE
    aligner.mismatch_score = MISMATCH_SCORE
    aligner.open_internal_insertion_score = GAP_OPEN_SCORE
    aligner.extend_internal_insertion_score = GAP_EXTEND_SCORE
    aligner.open_internal_deletion_score = GAP_OPEN_SCORE
    aligner.extend_internal_deletion_score = GAP_EXTEND_SCORE
    # Target is the document, query the context: a context character facing
    # a gap at either end pays like any gap, document overhang is free.
    aligner.open_end_insertion_score = GAP_OPEN_SCORE
    aligner.extend_end_insertion_score = GAP_EXTEND_SCORE
    aligner.end_deletion_score = 0.0
    return aligner


_ALIGNER = _make_aligner()


class _Normalised:
    """Lower-cased, whitespace-collapsed text and its map to the original.

    ``starts[i]``/``ends[i]`` bound the original characters that produced
    normalised character ``i`` (a collapsed whitespace run covers the run;
    both characters of a lower-cased 'İ' cover the 'İ').
    """

    __slots__ = ("codes", "ends", "starts", "text")

    def __init__(self, text: str):
        lowered = text.lower()
        if len(lowered) == len(text):
            origin = np.arange(len(text), dtype=np.int64)
        else:  # some character lower-cases to several ('İ' -> 'i' + U+0307)
            pieces = [ch.lower() for ch in text]
            lowered = "".join(pieces)
            origin = np.repeat(
                np.arange(len(text), dtype=np.int64), [len(p) for p in pieces]
            )
        codes = np.frombuffer(lowered.encode("utf-32-le", "surrogatepass"), dtype="<u4")
        space = _WHITESPACE[np.minimum(codes, len(_WHITESPACE) - 1)]
        before = np.concatenate(([False], space[:-1]))
        after = np.concatenate((space[1:], [False]))
        ends = origin + 1
        ends[space & ~before] = origin[space & ~after] + 1
        keep = ~(space & before)
        # No leading or trailing space: " x " and "x" align alike.
        kept = np.flatnonzero(keep)
        if kept.size and space[kept[0]]:
            keep[kept[0]] = False
        if kept.size and space[kept[-1]]:
            keep[kept[-1]] = False
        self.codes = np.where(space, _SPACE, codes).astype("<u4")[keep]
        self.starts = origin[keep]
        self.ends = ends[keep]
        self.text = self.codes.tobytes().decode("utf-32-le", "surrogatepass")


def _kmer_hashes(codes: np.ndarray, k: int) -> np.ndarray:
    count = len(codes) - k + 1
    if count <= 0:
        return np.empty(0, dtype=np.uint64)
    wide = codes.astype(np.uint64)
    hashes = wide[:count].copy()
    for t in range(1, k):  # in place; wraps modulo 2**64, as a rolling hash should
        hashes *= _HASH_BASE
        hashes += wide[t : t + count]
    return hashes


def _mixed(hashes: np.ndarray) -> np.ndarray:
    """``hashes`` through splitmix64's finaliser, in place: every bit then
    moves the high ones, which the index keys keep (a rolling hash's last
    character only reaches its low bits)."""
    hashes ^= hashes >> np.uint64(30)
    hashes *= np.uint64(0xBF58476D1CE4E5B9)
    hashes ^= hashes >> np.uint64(27)
    hashes *= np.uint64(0x94D049BB133111EB)
    hashes ^= hashes >> np.uint64(31)
    return hashes


class DocumentIndex:
    """A document prepared for many :func:`align_context` calls.

    Build it once per document and pass it to every context of that
    document: it holds the normalised text, the map from normalised to
    original offsets, and sorted k-mer hashes for seeding.

    Args:
        document: the original document text.
    """

    def __init__(self, document: str):
        self.document = document
        self._norm = _Normalised(document)
        # Sorted k-mer hashes per size. Nearly every context seeds with the
        # long k-mers; the short ones, which only serve short or badly
        # copied contexts, are made when one first needs them.
        self._kmers: dict[int, tuple[np.ndarray, np.uint64]] = {}
        self._sorted_kmers(_KMER_SIZES[0])

    def _sorted_kmers(self, k: int) -> tuple[np.ndarray, np.uint64]:
        """The document's k-mers as sorted keys, and the mask of a key's
        offset bits.

        A key is a k-mer's mixed hash with its low bits replaced by the
        k-mer's offset, so one sort orders hashes and carries offsets: a
        third of an argsort's time. Two k-mers whose mixed hashes agree
        above those bits (46 bits at 200,000 characters) share seeds; such
        a false seed only proposes a window Biopython scores, it never
        hides a true one.

        The sort is a radix pass over the keys' top 16 bits (numpy's stable
        sort of 16-bit integers), then a stable sort, which merges the runs
        that pass left in order; neither needs numpy's SIMD sort. At 200,000
        characters on an AMD EPYC where numpy used no SIMD sort: 2.8 ms
        against 8-10 for a plain sort (which took about 1 ms on an Intel CPU
        where it did).
        """
        if k not in self._kmers:
            hashes = _mixed(_kmer_hashes(self._norm.codes, k))
            offset = np.uint64((1 << max(1, (len(hashes) - 1).bit_length())) - 1)
            hashes &= ~offset
            hashes |= np.arange(len(hashes), dtype=np.uint64)
            top = (hashes >> np.uint64(48)).astype(np.uint16)
            hashes = hashes[np.argsort(top, kind="stable")]
            hashes.sort(kind="stable")
            self._kmers[k] = (hashes, offset)
        return self._kmers[k]

    @property
    def text(self) -> str:
        """The normalised document the aligner sees."""
        return self._norm.text

    def _seeds(
        self, codes: np.ndarray, k: int, *, max_occurrences: int | None
    ) -> tuple[np.ndarray, np.ndarray, int]:
        """Shared k-mers: document offsets, context offsets, and how many
        context k-mers were left out for occurring over ``max_occurrences``
        times in the document."""
        keys, offset = self._sorted_kmers(k)
        query = _mixed(_kmer_hashes(codes, k)) & ~offset
        left = np.searchsorted(keys, query, side="left")
        counts = np.searchsorted(keys, query | offset, side="right") - left
        use = counts > 0
        frequent = 0
        if max_occurrences is not None:
            frequent = int(np.count_nonzero(counts > max_occurrences))
            use &= counts <= max_occurrences
        left, counts = left[use], counts[use]
        total = int(counts.sum())
        if total == 0:
            empty = np.empty(0, dtype=np.int64)
            return empty, empty, frequent
        firsts = np.repeat(left - np.cumsum(counts) + counts, counts)
        doc_pos = (keys[firsts + np.arange(total)] & offset).astype(np.int64)
        ctx_pos = np.repeat(np.flatnonzero(use), counts)
        return doc_pos, ctx_pos, frequent


def is_aligned(alignment: Alignment, *, threshold: float = DEFAULT_THRESHOLD) -> bool:
    """Whether an alignment is good enough to keep its context (eq. 2)."""
    return alignment.score >= threshold


def align_full(document: str, context: str) -> Alignment:
    """Align a context against the whole document with Biopython.

    The reference for :func:`align_context`: same scoring, no windows, and
    about 1-2 s for a 200-character context in a 200,000-character document.

    Args:
        document: the original document text.
        context: the text the LLM claims to have copied.

    Returns:
        The alignment; ``start``/``end`` index ``document``. A blank context
        gives ``Alignment(0.0, None, None, "")``.
    """
    query = _Normalised(context)
    if not query.text:
        return _NOTHING
    doc = _Normalised(document)
    return _align_window(document, doc, query, 0, len(doc.text))


def align_context(
    document: str, context: str, *, index: DocumentIndex | None = None
) -> Alignment:
    """Find where a context lies in its document and how faithfully.

    Gives the same span and score as :func:`align_full` whenever the best
    alignment runs through a seed of one of the most-voted k-mer diagonals (in
    tests and benchmarks, every copied or mistranscribed context), including
    Biopython's choice among equally good places (the last one). Invented
    contexts may get another low-scoring span. A context sharing no k-mer
    with the document (or a non-exact one shorter than 4 characters) gets
    ``Alignment(0.0, None, None, "")``: it would score far below the
    threshold anyway.

    Args:
        document: the original document text.
        context: the text the LLM claims to have copied.
        index: ``DocumentIndex(document)``, reused across the contexts of one
            document; built here when omitted.

    Returns:
        The alignment; ``start``/``end`` index ``document`` and ``text`` is
        ``document[start:end]``.

    Raises:
        ValueError: ``index`` was built for another document.
    """
    query = _Normalised(context)
    if not query.text:
        return _NOTHING
    if index is None:
        index = DocumentIndex(document)
    elif index.document is not document and index.document != document:
        raise ValueError("index was built for another document")
    doc = index._norm
    q = query.text
    n = len(q)

    # An exact occurrence scores n, which nothing else reaches; Biopython's
    # traceback returns the last of several.
    found = doc.text.rfind(q)
    if found >= 0:
        return _alignment(document, doc, 1.0, found, found + n)

    k, doc_pos, ctx_pos, frequent = _find_seeds(index, query.codes)
    if doc_pos.size == 0:
        return _NOTHING
    (lo, hi), diagonals = _seed_clusters(doc_pos, ctx_pos, n)
    size = len(doc.text)

    # The most-voted cluster gives a score the answer must reach: the best
    # alignment scores at least that, so it skips at most _max_deleted
    # document characters, and a cluster's diagonals widened by that much
    # (and by the context's length) hold it if it runs through any of its
    # seeds. A window with too few seeds to reach that score is skipped (see
    # _min_seeds), so noise clusters cost nothing.
    first = (max(0, lo - n // 4 - k), min(size, hi + n // 4 + k))
    floor = _ALIGNER.score(doc.text[first[0] : first[1]], q)
    slack = _max_deleted(n, floor)
    needed = _min_seeds(n, k, floor) - frequent
    spans = [(max(0, a - slack), min(size, b + n + slack)) for a, b in diagonals]
    windows = [
        (a, b)
        for a, b in _merge([*spans, first])
        if _distinct_seeds(doc_pos, ctx_pos, k, a, b) >= needed
    ]
    scores = [_ALIGNER.score(doc.text[a:b], q) for a, b in windows]
    best = max(scores)
    # Ties go to the last window, as Biopython prefers the last end position.
    lo, hi = windows[max(i for i, s in enumerate(scores) if s == best)]
    return _align_window(document, doc, query, lo, hi)


def _max_deleted(n: int, score: float) -> int:
    """The most document characters an alignment scoring ``score`` can skip
    between context characters: each costs at least -GAP_EXTEND_SCORE out of
    the n * MATCH_SCORE there is to gain. One through an intact seed on
    diagonal d (document offset minus context offset) so starts at or after
    d minus that many, and ends at or before d + n plus that many."""
    return math.ceil((n * MATCH_SCORE - score) / -GAP_EXTEND_SCORE) + 1


def _min_seeds(n: int, k: int, score: float) -> int:
    """How many context k-mers an alignment scoring ``score`` keeps intact.

    Its deficit n - score is spent on events (a mismatch run, a gap), each
    costing at least ``event`` and breaking at most k - 1 k-mers plus one per
    context character it involves, which costs at least ``per_char`` each.
    """
    event = min(-GAP_OPEN_SCORE, MATCH_SCORE - MISMATCH_SCORE)
    per_char = min(MATCH_SCORE - MISMATCH_SCORE, MATCH_SCORE - GAP_EXTEND_SCORE)
    deficit = max(0.0, n * MATCH_SCORE - score)
    broken = deficit / event * (k - 1) + deficit / per_char
    return (n - k + 1) - math.ceil(broken + 1e-9)


def _distinct_seeds(
    doc_pos: np.ndarray, ctx_pos: np.ndarray, k: int, lo: int, hi: int
) -> int:
    inside = (doc_pos >= lo) & (doc_pos + k <= hi)
    return int(np.unique(ctx_pos[inside]).size)


def _find_seeds(
    index: DocumentIndex, codes: np.ndarray
) -> tuple[int, np.ndarray, np.ndarray, int]:
    """Seeds of the first k-mer size that has any: (k, doc, context, frequent).

    ``frequent`` counts context k-mers left out for being too common; they
    may still be intact in any window.
    """
    sizes = [k for k in _KMER_SIZES if k <= len(codes)]
    if len(codes) < _LONG_CONTEXT:
        sizes = [k for k in sizes if k < _KMER_SIZES[0]] or sizes
    for k in sizes:
        doc_pos, ctx_pos, frequent = index._seeds(
            codes, k, max_occurrences=_MAX_KMER_OCCURRENCES
        )
        if doc_pos.size:
            return k, doc_pos, ctx_pos, frequent
    if sizes:  # every seed is common: let them all vote
        return sizes[0], *index._seeds(codes, sizes[0], max_occurrences=None)
    empty = np.empty(0, dtype=np.int64)
    return 0, empty, empty, 0


def _seed_clusters(
    doc_pos: np.ndarray, ctx_pos: np.ndarray, n: int
) -> tuple[tuple[int, int], list[tuple[int, int]]]:
    """The document range of the most-voted cluster's seeds, and the range
    of diagonals (document minus context offset) of each most-voted
    cluster's seeds, best first.

    A seed at document offset p and context offset q votes for diagonal
    p - q; bins are wide enough that an inserted or elided word keeps its
    seeds in one bin or the next.
    """
    width = max(16, n // 4)
    bins = (doc_pos - ctx_pos + n) // width
    votes = np.bincount(bins)
    smooth = votes.copy()
    smooth[1:] += votes[:-1]
    smooth[:-1] += votes[1:]
    # Among equal votes the later bin first, as Biopython prefers the last
    # of equally good places.
    ranked = len(smooth) - 1 - np.argsort(-smooth[::-1], kind="stable")
    most = max(_MIN_WINDOWS, _WINDOW_BUDGET // n)
    chosen: list[int] = []
    taken: set[int] = set()  # bins within 2 of a chosen one
    for b in ranked[: 16 * most].tolist():
        if smooth[b] == 0 or len(chosen) == most:
            break
        if b not in taken:
            chosen.append(b)
            taken.update(range(b - 2, b + 3))
    order = np.argsort(bins, kind="stable")
    by_bin, positions = bins[order], doc_pos[order]
    lows = np.searchsorted(by_bin, np.array(chosen) - 1, side="left")
    highs = np.searchsorted(by_bin, np.array(chosen) + 1, side="right")
    diagonal = positions - ctx_pos[order]
    diagonals = [
        (int(diagonal[lo:hi].min()), int(diagonal[lo:hi].max()))
        for lo, hi in zip(lows.tolist(), highs.tolist(), strict=True)
    ]
    best = positions[lows[0] : highs[0]]
    return (int(best.min()), int(best.max()) + 1), diagonals


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping spans joined, in document order."""
    spans = sorted(spans)
    merged = [spans[0]]
    for a, b in spans[1:]:
        if a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def _align_window(
    document: str, doc: _Normalised, query: _Normalised, lo: int, hi: int
) -> Alignment:
    # Only the first alignment: enumerating co-optimal ones can take forever.
    aligned = _ALIGNER.align(doc.text[lo:hi], query.text)[0]
    coords = aligned.coordinates
    matches = 0
    length = 0
    first = last = None
    pending_gap = 0  # document characters skipped since the last context one
    for k in range(coords.shape[1] - 1):
        t0, t1 = int(coords[0, k]), int(coords[0, k + 1])
        q0, q1 = int(coords[1, k]), int(coords[1, k + 1])
        if t1 > t0 and q1 > q0:
            a = doc.codes[lo + t0 : lo + t1]
            matches += int(np.count_nonzero(a == query.codes[q0:q1]))
            if first is None:
                first = lo + t0
            last = lo + t1
        if q1 > q0:
            if length:  # a deletion between context characters counts
                length += pending_gap
            pending_gap = 0
            length += q1 - q0
        else:
            pending_gap += t1 - t0
    if first is None or last is None or length == 0:
        return _NOTHING
    return _alignment(document, doc, matches / length, first, last)


def _alignment(
    document: str, doc: _Normalised, score: float, first: int, last: int
) -> Alignment:
    start, end = int(doc.starts[first]), int(doc.ends[last - 1])
    return Alignment(score=score, start=start, end=end, text=document[start:end])


_NOTHING = Alignment(score=0.0, start=None, end=None, text="")

"""Checked items against FELM's human labels (paper Table 1).

FELM splits each response into segments, each labelled true (factual) or
false (a factual error). The positive class is the error, as in FELM and
FINCH-ZK: a segment is flagged when the worst block overlapping it (by
character offsets in the response) is a CONTRADICTION, and a response when
its label is NON-FACTUAL; it truly is non-factual when any segment is false.
The correlations set the response score against the share of its segments
that are false, the passage-level ground truth of SelfCheckGPT.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ...evaluate import balanced_accuracy, flag_metrics, pearson, spearman

#: Worst last: the label a segment takes from the blocks over it.
_RANK = {"UNKNOWN": 0, "ACCURATE": 1, "NEUTRAL": 2, "CONTRADICTION": 3}
# FELM responses and segments disagree on escapes ("\\n" beside a newline),
# list markers ("*"), spacing and GSM8K's calculator notes ("$<<3*5=15>>15",
# dropped from segments); they are matched on letters and digits alone, a
# written "\n", "\t" or "\r" read as white space.
_ESCAPE_OR_OTHER = re.compile(r"<<[^<>]*>>|\\[ntr]|[\W_]")


@dataclass(frozen=True)
class Labelled:
    """A FELM line: the response, its segments and their labels."""

    id: str
    response: str
    segments: tuple[str, ...]
    labels: tuple[bool, ...]


@dataclass(frozen=True)
class Checked:
    """What evaluation needs of a checked line."""

    id: str
    response: str
    blocks: tuple[tuple[int, int, str], ...]
    score: float | None
    label: str


def _id(raw: dict[str, Any]) -> str:
    value = raw.get("id", raw.get("index"))
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str) or not value:
        raise ValueError("field 'id' (or FELM's 'index') must be a non-empty string")
    return value


def labelled_from_json(raw: Any) -> Labelled:
    """A :class:`Labelled` from a FELM line; ValueError names a bad field."""
    if not isinstance(raw, dict):
        raise ValueError("each line must be a JSON object")
    response, segments, labels = (
        raw.get(k) for k in ("response", "segmented_response", "labels")
    )
    if not isinstance(response, str):
        raise ValueError("field 'response' must be a string")
    if (
        not isinstance(segments, list)
        or not segments
        or not all(isinstance(s, str) for s in segments)
    ):
        raise ValueError("field 'segmented_response' must be a non-empty string list")
    if not isinstance(labels, list) or not all(isinstance(v, bool) for v in labels):
        raise ValueError("field 'labels' must be a list of true / false")
    if len(labels) != len(segments):
        raise ValueError(
            f"{len(labels)} labels for {len(segments)} segments in 'segmented_response'"
        )
    return Labelled(_id(raw), response, tuple(segments), tuple(labels))


def checked_from_json(raw: Any) -> Checked:
    """A :class:`Checked` from a line of consistency output."""
    if not isinstance(raw, dict) or not isinstance(raw.get("blocks"), list):
        raise ValueError("not a line of consistency output (no 'blocks' list)")
    if raw.get("label") not in ("FACTUAL", "NON-FACTUAL"):
        raise ValueError("field 'label' must be 'FACTUAL' or 'NON-FACTUAL'")
    score = raw.get("score")
    if score is not None and (
        isinstance(score, bool) or not isinstance(score, (int, float))
    ):
        raise ValueError("field 'score' must be a number or null")
    if not isinstance(raw.get("response"), str):
        raise ValueError("field 'response' must be a string")
    blocks = []
    for i, b in enumerate(raw["blocks"]):
        if (
            not isinstance(b, dict)
            or not all(_offset(b.get(k)) for k in ("start", "end"))
            or b.get("label") not in _RANK
        ):
            raise ValueError(
                f"blocks[{i}] must have integer 'start' and 'end' and a 'label'"
            )
        blocks.append((b["start"], b["end"], b["label"]))
    return Checked(_id(raw), raw["response"], tuple(blocks), score, raw["label"])


def _offset(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _canonical(text: str) -> tuple[str, list[int]]:
    """Lower-cased letters and digits of ``text``, and where each stood."""
    chars: list[str] = []
    where: list[int] = []
    at = 0
    for m in _ESCAPE_OR_OTHER.finditer(text):
        chars.extend(text[at : m.start()].lower())
        where.extend(range(at, m.start()))
        at = m.end()
    chars.extend(text[at:].lower())
    where.extend(range(at, len(text)))
    return "".join(chars), where


def segment_offsets(
    response: str, segments: Sequence[str]
) -> list[tuple[int, int] | None]:
    """``(start, end)`` of each segment in ``response``, found in order.

    A segment is found verbatim after the previous one, else by its letters
    and digits alone (see the module notes); ``None`` when neither finds it.
    """
    canon, where = _canonical(response)
    out: list[tuple[int, int] | None] = []
    at = canon_at = 0
    for segment in segments:
        start = response.find(segment, at) if segment.strip() else -1
        if start >= 0:
            span = (start, start + len(segment))
        else:
            key = _canonical(segment)[0]
            found = canon.find(key, canon_at) if key else -1
            if found < 0:
                out.append(None)
                continue
            span = (where[found], where[found + len(key) - 1] + 1)
        out.append(span)
        at = span[1]
        canon_at = bisect_left(where, at)
    return out


def _figures(flagged: list[bool], truth: list[bool]) -> dict[str, Any]:
    figures = flag_metrics(flagged, truth)
    figures["balanced_accuracy"] = balanced_accuracy(figures["confusion"])
    return figures


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def evaluate_consistency(
    checked: Iterable[Checked], labelled: Iterable[Labelled]
) -> dict[str, Any]:
    """Segment- and response-level figures of checked items against FELM.

    Returns:
        A JSON-ready dict: ``items`` (checked and labelled), ``unchecked``
        (labelled, not checked), ``unlabelled``; ``segment`` and
        ``response`` with precision, recall, F1, accuracy, balanced
        accuracy and the confusion counts of flagging an error;
        ``segment.unmatched`` counts segments not found in the response
        (left out) and ``segment.unscored`` those under no scored block
        (not flagged); ``response.pearson`` and ``response.spearman`` over
        the ``response.correlated`` items that have a score.
    """
    labels = {x.id: x for x in labelled}
    checked = list(checked)
    rows = [c for c in checked if c.id in labels]
    seg_flagged, seg_truth, unmatched, unscored = [], [], 0, 0
    resp_flagged, resp_truth, scores, shares = [], [], [], []
    for row in rows:
        truth = labels[row.id]
        offsets = segment_offsets(row.response, truth.segments)
        for span, factual in zip(offsets, truth.labels, strict=True):
            if span is None:
                unmatched += 1
                continue
            over = [lab for s, e, lab in row.blocks if s < span[1] and span[0] < e]
            worst = max(over, key=_RANK.__getitem__, default="UNKNOWN")
            unscored += worst == "UNKNOWN"
            seg_flagged.append(worst == "CONTRADICTION")
            seg_truth.append(not factual)
        share = sum(not v for v in truth.labels) / len(truth.labels)
        resp_flagged.append(row.label == "NON-FACTUAL")
        resp_truth.append(share > 0)
        if row.score is not None:
            scores.append(float(row.score))
            shares.append(share)
    checked_ids = {r.id for r in rows}
    return {
        "items": len(rows),
        "unchecked": sum(i not in checked_ids for i in labels),
        "unlabelled": len(checked) - len(rows),
        "segment": {
            **_figures(seg_flagged, seg_truth),
            "unmatched": unmatched,
            "unscored": unscored,
        },
        "response": {
            **_figures(resp_flagged, resp_truth),
            "correlated": len(scores),
            "pearson": _round(pearson(scores, shares)),
            "spearman": _round(spearman(scores, shares)),
        },
    }

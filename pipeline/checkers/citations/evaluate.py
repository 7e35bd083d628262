"""Precision, recall and F1 of hallucinated citations, matched as the
LePhantomCite paper matches them (Section 4.1): a predicted span and a true
one match when one contains the other (here by offsets in the same brief).

Truth lines: ``{"brief_id", "start", "end", "text", "hallucination":
kind | null, "absent": bool}``, one per citation written in the brief
(``absent``: real, but its text is in none of the sources).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from .checks import PROBLEMS

_STATUSES = ("verified", "hallucinated", "unverifiable")


def _span_problem(raw: Any) -> str | None:
    if not isinstance(raw, dict):
        return "not a JSON object"
    if not isinstance(raw.get("brief_id"), str):
        return "'brief_id' must be a string"
    for name in ("start", "end"):
        if not isinstance(raw.get(name), int) or isinstance(raw.get(name), bool):
            return f"{name!r} must be an integer"
    if raw["end"] < raw["start"]:
        return "'end' is before 'start'"
    return None


def checked_line(raw: Any) -> dict[str, Any]:
    """A ``cite-check`` output line, checked.

    Raises:
        ValueError: a field the evaluation reads is missing or wrong.
    """
    problem = _span_problem(raw) or (
        None
        if raw.get("status") in _STATUSES
        else f"'status' must be one of {_STATUSES}"
    )
    if problem:
        raise ValueError(problem)
    return raw


def truth_line(raw: Any) -> dict[str, Any]:
    """A truth line, checked.

    Raises:
        ValueError: a field the evaluation reads is missing or wrong.
    """
    problem = _span_problem(raw)
    kind = raw.get("hallucination") if isinstance(raw, dict) else None
    if problem is None and kind is not None and kind not in PROBLEMS:
        problem = f"'hallucination' must be null or one of {', '.join(PROBLEMS)}"
    if problem:
        raise ValueError(problem)
    return raw


def _contains(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return a["brief_id"] == b["brief_id"] and (
        (a["start"] <= b["start"] and b["end"] <= a["end"])
        or (b["start"] <= a["start"] and a["end"] <= b["end"])
    )


def evaluate_citations(
    checked: Sequence[Mapping[str, Any]], truth: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """The figures of ``cite-evaluate``.

    Args:
        checked: ``cite-check`` output lines.
        truth: the true citations, hallucinated or not.

    Returns:
        ``precision``/``recall``/``f1`` of hallucinated citations,
        ``recall_by_kind``, ``found`` (share of true citations some checked
        citation matches), ``absent_called_hallucinated`` (share of real
        citations absent from the sources called hallucinated), and counts.
    """
    by_brief: dict[str, list[Mapping[str, Any]]] = {}
    for c in checked:
        by_brief.setdefault(c["brief_id"], []).append(c)

    def matches(t):
        return [c for c in by_brief.get(t["brief_id"], ()) if _contains(c, t)]

    flagged = [c for c in checked if c["status"] == "hallucinated"]
    bad = [t for t in truth if t.get("hallucination")]
    bad_by_brief: dict[str, list[Mapping[str, Any]]] = {}
    for t in bad:
        bad_by_brief.setdefault(t["brief_id"], []).append(t)
    true_flags = sum(
        any(_contains(c, t) for t in bad_by_brief.get(c["brief_id"], ()))
        for c in flagged
    )
    caught = [t for t in bad if any(c["status"] == "hallucinated" for c in matches(t))]
    precision = true_flags / len(flagged) if flagged else 0.0
    recall = len(caught) / len(bad) if bad else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    kinds = Counter(t["hallucination"] for t in bad)
    caught_kinds = Counter(t["hallucination"] for t in caught)
    absent = [t for t in truth if t.get("absent") and not t.get("hallucination")]
    absent_flagged = [
        t for t in absent if any(c["status"] == "hallucinated" for c in matches(t))
    ]
    found = [t for t in truth if matches(t)]
    return {
        "precision": round(precision, 4),
        "recall": round(recall, 4),
        "f1": round(f1, 4),
        "recall_by_kind": {
            k: {"recall": round(caught_kinds[k] / n, 4), "n": n}
            for k, n in sorted(kinds.items())
        },
        "found": round(len(found) / len(truth), 4) if truth else 0.0,
        "absent_called_hallucinated": round(len(absent_flagged) / len(absent), 4)
        if absent
        else 0.0,
        "counts": {
            "citations_true": len(truth),
            "citations_checked": len(checked),
            "hallucinated_true": len(bad),
            "hallucinated_flagged": len(flagged),
            "absent_true": len(absent),
            "status": dict(Counter(c["status"] for c in checked)),
        },
    }

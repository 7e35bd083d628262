"""Metrics: how well verdicts flag unsafe claims (paper Table 1, Figure 5)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from itertools import groupby
from typing import Any

from .types import CheckedClaim, Label


def flag_metrics(flagged: Sequence[bool], unsafe: Sequence[bool]) -> dict[str, Any]:
    """Precision / recall / F1 of flagging *unsafe* (the positive class)."""
    tp = sum(f and u for f, u in zip(flagged, unsafe, strict=True))
    fp = sum(f and not u for f, u in zip(flagged, unsafe, strict=True))
    fn = sum(u and not f for f, u in zip(flagged, unsafe, strict=True))
    tn = len(flagged) - tp - fp - fn
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "n": len(flagged),
        "precision": round(precision, 4),
        "recall": round(recall, 4),
        "f1": round(f1, 4),
        "accuracy": round((tp + tn) / len(flagged), 4) if flagged else 0.0,
        "confusion": {"tp": tp, "fp": fp, "fn": fn, "tn": tn},
    }


def balanced_accuracy(confusion: Mapping[str, int]) -> float | None:
    """The mean of the recalls of both classes; None when one is absent."""
    tp, fn, tn, fp = (confusion[k] for k in ("tp", "fn", "tn", "fp"))
    if not tp + fn or not tn + fp:
        return None
    return round((tp / (tp + fn) + tn / (tn + fp)) / 2, 4)


def best_threshold(
    scores: Sequence[float], unsafe: Sequence[bool], *, forced: Sequence[bool] = ()
) -> tuple[float, float]:
    """The threshold on p(supports) that maximises F1 of flagging unsafe.

    Args:
        scores: scorer outputs; a claim is flagged when below threshold.
        unsafe: the gold answer for each.
        forced: claims already flagged whatever the score (e.g. not
            aligned), so the F1 counts the whole pipeline.

    Returns:
        ``(threshold, f1)``; ties go to the threshold nearest 0.5.
    """
    forced = list(forced) or [False] * len(scores)
    candidates = sorted({0.5, *scores, *(s + 1e-6 for s in scores)})
    best = (0.5, -1.0)
    for t in candidates:
        flagged = [f or s < t for s, f in zip(scores, forced, strict=True)]
        f1 = flag_metrics(flagged, unsafe)["f1"]
        if f1 > best[1] or (f1 == best[1] and abs(t - 0.5) < abs(best[0] - 0.5)):
            best = (t, f1)
    return best


#: Margins tried for the rival rule, widest first.
RIVAL_MARGINS = (0.5, 0.4, 0.3, 0.2, 0.15, 0.1, 0.05, 0.0)


def rival_margin(
    scores: Sequence[float],
    rivals: Sequence[float | None],
    unsafe: Sequence[bool],
    *,
    threshold: float,
    target: float,
) -> float | None:
    """The narrowest margin whose own flags (a rival outscores the claim by
    more than it, the threshold passes the claim) are unsafe at least
    ``target`` of the time, or None if none is: rivals then stay unread.

    Args:
        scores: the claims' scores.
        rivals: the best score among each claim's rivals (None: no rival).
        unsafe: the gold answer for each.
        threshold: the scorer's threshold, which flags on its own.
        target: the precision the margin's own flags must reach.
    """
    chosen = None
    for margin in RIVAL_MARGINS:
        extra = [
            bad
            for s, r, bad in zip(scores, rivals, unsafe, strict=True)
            if s >= threshold and r is not None and r - s > margin
        ]
        if extra and sum(extra) / len(extra) >= target:
            chosen = margin
    return chosen


def precision_threshold(
    scores: Sequence[float], unsafe: Sequence[bool], *, target: float
) -> float | None:
    """The highest threshold whose flags (score below it) are unsafe at
    least ``target`` of the time, or None if none is.

    Without labels the threshold is read off silver pairs, whose easy
    negatives make any best-F1 threshold flag too much on real claims: an
    operating point for precision keeps flags trustworthy, and the checks
    that need no scorer (evidence not found, a field the span states
    otherwise) carry recall.
    """
    ranked = sorted(zip(scores, unsafe, strict=True))
    best, flagged, hits = None, 0, 0
    for i, (score, bad) in enumerate(ranked):
        flagged, hits = flagged + 1, hits + bad
        tied = i + 1 < len(ranked) and ranked[i + 1][0] == score
        if not tied and hits / flagged >= target:
            best = score + 1e-6
    return best


def evaluate_checked(
    checked: Iterable[CheckedClaim], labels: Mapping[str, Label]
) -> dict[str, Any]:
    """Score verdicts against human labels.

    Returns a JSON-ready dict: overall precision / recall / F1 of flagging
    unsafe over the labelled claims, a breakdown by the labels' ``kind``
    when they carry one, and per source model the SafePassage score (share of
    all its claims judged safe) beside the human score (share of its
    labelled claims labelled safe), as in paper Figure 5.
    """
    checked = list(checked)
    pairs = [(c, labels[c.claim.id]) for c in checked if c.claim.id in labels]
    flagged = [c.verdict == "unsafe" for c, _ in pairs]
    unsafe = [lab.label == "unsafe" for _, lab in pairs]
    result: dict[str, Any] = {
        **flag_metrics(flagged, unsafe),
        "unlabelled": len(checked) - len(pairs),
    }
    by_kind: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    for (_, lab), f, u in zip(pairs, flagged, unsafe, strict=True):
        if "kind" in lab.extra:
            by_kind[str(lab.extra["kind"])].append((f, u))
    if by_kind:
        result["by_kind"] = {
            kind: {
                "n": len(rows),
                "labelled_unsafe": sum(u for _, u in rows),
                "flagged": sum(f for f, _ in rows),
                "accuracy": round(sum(f == u for f, u in rows) / len(rows), 4),
            }
            for kind, rows in sorted(by_kind.items())
        }
    result["by_model"] = _by_model(checked, labels)
    result["model_rank_rho"] = model_rank_rho(result["by_model"])
    return result


def model_rank_rho(by_model: Mapping[str, Mapping[str, Any]]) -> float | None:
    """Paper Figure 5 as one number: Spearman's rho, across source models,
    between the SafePassage score and the human score. Near 1, the scorer
    ranks the LLMs as the experts do; None with under three models that
    have both scores (labelled, and checked)."""
    rows = [
        m
        for m in by_model.values()
        if m["human_score"] is not None and m["safepassage_score"] is not None
    ]
    if len(rows) < 3:
        return None
    rho = spearman(
        [m["safepassage_score"] for m in rows], [m["human_score"] for m in rows]
    )
    return None if rho is None else round(rho, 4)


def _by_model(
    checked: list[CheckedClaim], labels: Mapping[str, Label]
) -> dict[str, Any]:
    groups: dict[str, list[CheckedClaim]] = defaultdict(list)
    for c in checked:
        groups[c.claim.model or "unknown"].append(c)
    out = {}
    for model, rows in sorted(groups.items()):
        labelled = [labels[c.claim.id] for c in rows if c.claim.id in labels]
        out[model] = {
            "n": len(rows),
            "safepassage_score": round(
                sum(c.verdict == "safe" for c in rows) / len(rows), 4
            ),
            "n_labelled": len(labelled),
            "human_score": (
                round(sum(lab.label == "safe" for lab in labelled) / len(labelled), 4)
                if labelled
                else None
            ),
        }
    return out


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Pearson's r; None for fewer than two points or a constant side."""
    n = len(xs)
    if n < 2:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if not sxx or not syy:
        return None
    return sxy / math.sqrt(sxx * syy)


def _ranks(values: Sequence[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1  # ties share their mean rank
        i = j + 1
    return ranks


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Spearman's rho: Pearson's r of the ranks, ties given their mean rank."""
    return pearson(_ranks(xs), _ranks(ys))


def cohen_kappa(pairs: Iterable[tuple[str, str]]) -> float | None:
    """Cohen's kappa of two raters: agreement beyond what chance explains.

    Args:
        pairs: ``(first rater's label, second rater's label)`` per item, e.g.
            the two decisive labels of an overlap claim (earlier, later).

    Returns:
        ``(p_o - p_e) / (1 - p_e)`` rounded to 4 places, with ``p_o`` the
        observed agreement and ``p_e`` the agreement expected from each
        rater's label frequencies; ``None`` when it is undefined: no pairs,
        or both raters used one and the same class only (``p_e == 1``).
    """
    first: dict[str, int] = defaultdict(int)
    second: dict[str, int] = defaultdict(int)
    agree = n = 0
    for a, b in pairs:
        first[a] += 1
        second[b] += 1
        agree += a == b
        n += 1
    if not n:
        return None
    p_o = agree / n
    p_e = sum(first[k] * second.get(k, 0) for k in first) / (n * n)
    if p_e >= 1.0:
        return None
    return round((p_o - p_e) / (1 - p_e), 4)


def krippendorff_alpha(units: Iterable[Sequence[str]]) -> float | None:
    """Krippendorff's alpha for nominal labels: agreement beyond chance for
    any number of raters per item, items with different raters included,
    where Cohen's kappa takes two raters on every item.

    Args:
        units: the labels each item got, one per rater (items with fewer
            than two labels are left out: nothing to agree on).

    Returns:
        ``1 - D_o / D_e`` rounded to 4 places, from the coincidence matrix
        (Krippendorff 2011, "Computing Krippendorff's alpha-reliability");
        ``None`` when it is undefined: no pairable labels, or one class only.
    """
    pairable = [list(u) for u in units if len(u) >= 2]
    coincidences: dict[tuple[str, str], float] = defaultdict(float)
    for labels in pairable:
        weight = 1 / (len(labels) - 1)
        for i, a in enumerate(labels):
            for j, b in enumerate(labels):
                if i != j:
                    coincidences[a, b] += weight
    totals: dict[str, float] = defaultdict(float)
    for (a, _), count in coincidences.items():
        totals[a] += count
    n = sum(totals.values())
    if n == 0 or len(totals) < 2:
        return None
    observed = sum(c for (a, b), c in coincidences.items() if a != b) / n
    expected = sum(totals[a] * totals[b] for a in totals for b in totals if a != b) / (
        n * (n - 1)
    )
    return round(1 - observed / expected, 4)


def roc_auc(scores: Sequence[float], positive: Sequence[bool]) -> float | None:
    """ROC AUC of ``scores`` for telling positive from negative rows.

    A threshold-free figure, so checkers whose scores live on different
    scales compare on one number. Computed as the Mann-Whitney U statistic
    from average ranks, so tied scores count half and it takes
    O(n log n).

    Args:
        scores: one score per row, higher meaning more likely positive.
        positive: the gold class of each row.

    Returns:
        The probability that a random positive row outscores a random
        negative one (ties half); ``None`` when either class is empty.

    Raises:
        ValueError: ``scores`` and ``positive`` differ in length.
    """
    if len(scores) != len(positive):
        raise ValueError("scores and positive differ in length")
    n_pos = sum(bool(p) for p in positive)
    n_neg = len(positive) - n_pos
    if not n_pos or not n_neg:
        return None
    rows = sorted(zip(scores, positive, strict=True), key=lambda r: r[0])
    rank_sum, below = 0.0, 0
    for _, tied in groupby(rows, key=lambda r: r[0]):
        group = [p for _, p in tied]
        # Tied rows share the mean of the 1-based ranks they span.
        rank_sum += (below + (len(group) + 1) / 2) * sum(map(bool, group))
        below += len(group)
    return (rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def precision_recall_curve(
    scores: Sequence[float], unsafe: Sequence[bool]
) -> list[dict[str, float]]:
    """Precision and recall of flagging unsafe at every cut of the scores.

    A claim is flagged when its score (p(supports)) is at or below the
    cut, so the pipeline's ``score < threshold`` gives the same flags for any
    threshold in ``(cut, next higher score]``. Tied scores move together.

    Args:
        scores: scorer outputs, one per labelled claim.
        unsafe: the gold answer for each.

    Returns:
        JSON-ready points ``{"threshold": cut, "precision", "recall"}`` with
        the cut ascending (recall rising); empty when there is no unsafe
        label (recall is undefined) or no score.
    """
    if len(scores) != len(unsafe):
        raise ValueError("scores and unsafe differ in length")
    positives = sum(bool(u) for u in unsafe)
    if not positives:
        return []
    rows = sorted(zip(scores, unsafe, strict=True), key=lambda r: r[0])
    points = []
    tp = flagged = 0
    for i, (score, is_unsafe) in enumerate(rows):
        tp += bool(is_unsafe)
        flagged += 1
        if i + 1 < len(rows) and rows[i + 1][0] == score:
            continue
        points.append(
            {
                "threshold": score,
                "precision": round(tp / flagged, 4),
                "recall": round(tp / positives, 4),
            }
        )
    return points

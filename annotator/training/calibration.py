"""A scorer version's calibration on the gold set, and the operating point the
admin picks by the share of hallucinations to flag.

Gold scores are the version's own ``ClaimScore`` rows on the gold
documents' claims that have a decisive expert label (settled by
``training.expert_labels``' rule: majority, a tie unsafe). Claims the
scorer never read (not aligned to their document: unsafe whatever it says)
have no score and are left out, so recall and precision here are the
scorer's on the claims it decides, as on the dashboard's PR curve.

The fit is numpy on at most a few thousand pairs: it runs in the request and
when training measures a new version on the gold set.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from annotator.claims.checking import scorer_threshold_set
from annotator.claims.records import claim_group, record_group
from annotator.core.errors import ApplicationError
from annotator.dashboard.charts import Series, line_chart
from annotator.labeling import gold
from annotator.labeling.labels import queue_keys_refresh
from annotator.models import (
    GRADER_SCORER_PREFIX,
    Claim,
    ClaimScore,
    Project,
    ScorerModel,
    Verdict,
)
from annotator.training.data import expert_labels
from pipeline.calibration import (
    DEFAULT_MIN_PER_TYPE,
    METHODS,
    Calibration,
    confident_recall,
    expected_calibration_error,
    fit_calibration,
    operating_point,
    reliability_diagram,
)

logger = logging.getLogger(__name__)

#: "auto" picks isotonic when each class has this many gold labels (no shape
#: assumed, but it learns noise below that), else temperature (two parameters).
AUTO_ISOTONIC_MIN_PER_CLASS = DEFAULT_MIN_PER_TYPE
FIT_METHODS = ("auto", *METHODS)
DIAGRAM_BINS = 10
#: How sure the admin may be that new claims' recall reaches the target: the
#: threshold aims at the gold recall whose one-sided lower bound does
#: (``pipeline.calibration.confident_recall``). At the target itself, half the
#: time the next claims' recall would fall short.
RECALL_CONFIDENCE = 0.95


class CalibrationError(ApplicationError):
    """The gold set cannot support the fit or the operating point asked for."""


@dataclass
class GoldScores:
    """One row per labelled, scored gold claim."""

    scores: list[float]
    safe: list[bool]
    types: list[str]
    documents: list[int]

    @property
    def n_unsafe(self) -> int:
        return len(self.safe) - sum(self.safe)


def _version_scores(scorer: ScorerModel):
    # The LLM grader's rows carry its own version string, which could equal a
    # scorer version by chance: they are excluded by name.
    return ClaimScore.objects.filter(
        claim__project_id=scorer.project_id, scorer_version=scorer.version
    ).exclude(scorer__startswith=GRADER_SCORER_PREFIX)


def gold_scores(scorer: ScorerModel) -> GoldScores:
    """``scorer``'s scores on the gold set's labelled claims."""
    project = scorer.project
    labels = expert_labels(project, gold_set=True)
    rows = gold.restrict(
        _version_scores(scorer),
        project,
        gold=True,
        document_field="claim__document_id",
    ).values_list(
        "claim_id",
        "score",
        claim_group(project.kind, "claim__data"),
        "claim__document_id",
    )
    # A version scored under two names (a renamed folder) keeps one score per
    # claim: the last one read.
    latest: dict[int, tuple[float, str, int]] = {}
    for claim_id, score, type_, document_id in rows.order_by("updated_at"):
        if claim_id in labels:
            latest[claim_id] = (score, type_, document_id)
    data = GoldScores([], [], [], [])
    for claim_id, (score, type_, document_id) in sorted(latest.items()):
        data.scores.append(min(1.0, max(0.0, float(score))))
        data.safe.append(labels[claim_id] == "safe")
        data.types.append(type_)
        data.documents.append(document_id)
    return data


def _require_both_classes(data: GoldScores, version: str, what: str) -> None:
    n_unsafe = data.n_unsafe
    n_safe = len(data.safe) - n_unsafe
    if not n_safe or not n_unsafe:
        raise CalibrationError(
            f"{what} needs gold labels of both classes on claims scored by "
            f"{version}; the gold set has {n_safe} safe and {n_unsafe} "
            "unsafe: label more gold claims (the queue hands them out) or "
            "rescore them with this version"
        )


def _method(method: str, data: GoldScores) -> str:
    if method not in FIT_METHODS:
        raise CalibrationError(
            f"method must be one of {', '.join(FIT_METHODS)}, not {method!r}"
        )
    if method != "auto":
        return method
    fewest = min(data.n_unsafe, len(data.safe) - data.n_unsafe)
    return "isotonic" if fewest >= AUTO_ISOTONIC_MIN_PER_CLASS else "temperature"


def _held_out_ece(data: GoldScores, method: str) -> float | None:
    """ECE of a two-fold fit, split by document parity: each half calibrated
    by a fit on the other. The in-sample ECE of an isotonic fit is near 0 by
    construction; this is what it is worth on labels it did not see. None
    when a half lacks a class."""
    probs = [0.0] * len(data.scores)
    for fold in (0, 1):
        train = [i for i, d in enumerate(data.documents) if d % 2 != fold]
        test = [i for i, d in enumerate(data.documents) if d % 2 == fold]
        train_safe = [data.safe[i] for i in train]
        if not test:
            continue
        if all(train_safe) or not any(train_safe):
            return None
        fitted = fit_calibration(
            [data.scores[i] for i in train],
            train_safe,
            [data.types[i] for i in train],
            method=method,
        )
        out = fitted.apply(
            [data.scores[i] for i in test], [data.types[i] for i in test]
        )
        for i, p in zip(test, out, strict=True):
            probs[i] = p
    return expected_calibration_error(probs, data.safe, bins=DIAGRAM_BINS)


def calibration_fit(
    data: GoldScores, *, version: str, method: str = "auto"
) -> dict[str, Any]:
    """The JSON stored in ScorerModel.calibration: ``Calibration.to_json()``
    plus ``fit`` (n, ECE before and after, when).

    Raises:
        CalibrationError: an unknown method, or gold labels of one class only.
    """
    chosen = _method(method, data)
    _require_both_classes(data, version, "a calibration")
    fitted = fit_calibration(data.scores, data.safe, data.types, method=chosen)
    calibrated = fitted.apply(data.scores, data.types)
    return {
        **fitted.to_json(),
        "fit": {
            "n": len(data.scores),
            "n_unsafe": data.n_unsafe,
            "requested": method,
            "ece_raw": expected_calibration_error(
                data.scores, data.safe, bins=DIAGRAM_BINS
            ),
            "ece_calibrated": expected_calibration_error(
                calibrated, data.safe, bins=DIAGRAM_BINS
            ),
            "ece_held_out": _held_out_ece(data, chosen),
            "bins": DIAGRAM_BINS,
            "fitted_at": timezone.now().isoformat(),
        },
    }


def scorer_calibrate(
    *, project: Project, scorer: ScorerModel, method: str = "auto"
) -> ScorerModel:
    """Fit ``scorer``'s calibration on its gold-set scores and store it.

    Raises:
        CalibrationError: a scorer of another project, an unknown method, or
            no gold labels of both classes among its scored claims.
    """
    _same_project(project, scorer)
    data = gold_scores(scorer)
    scorer.calibration = calibration_fit(data, version=scorer.version, method=method)
    scorer.save(update_fields=["calibration"])
    return scorer


def calibration_from_findings(findings, data, *, kind: str, log=None) -> dict[str, Any]:
    """The calibration of a version being registered, from the findings of
    its gold evaluation (``training.gold_measure``) and the gold data's
    labels; ``{}`` (and a log line) when the gold set cannot support one."""
    types = {str(p.id): record_group(p, kind) for p in data.claims}
    documents = {str(p.id): int(p.document_id) for p in data.claims}
    rows = GoldScores([], [], [], [])
    for f in findings:
        label = data.labels.get(f.claim_id)
        if f.score is None or label is None:
            continue
        rows.scores.append(min(1.0, max(0.0, float(f.score))))
        rows.safe.append(label.label == "safe")
        rows.types.append(types.get(str(f.claim_id), ""))
        rows.documents.append(documents.get(str(f.claim_id), 0))
    try:
        fitted = calibration_fit(rows, version="the new version")
    except CalibrationError as e:
        if log:
            log(f"no calibration: {e}")
        return {}
    if log:
        fit = fitted["fit"]
        log(
            f"calibration ({fitted['method']}) on {fit['n']} gold scores: ECE "
            f"{fit['ece_raw']:.3f} raw, {fit['ece_calibrated']:.3f} calibrated"
        )
    return fitted


def calibration_summary(scorer: ScorerModel) -> dict[str, Any] | None:
    """What the API and the dashboard show of a stored calibration (not its
    knots); None until fitted."""
    stored = scorer.calibration or {}
    if not stored:
        return None
    return {
        "method": stored.get("method"),
        "by_type": sorted(stored.get("by_type", {})),
        **stored.get("fit", {}),
    }


# --- the operating point ---------------------------------------------------------


def _same_project(project: Project, scorer: ScorerModel) -> None:
    if scorer.project_id != project.pk:
        raise CalibrationError(
            f"scorer {scorer.version} belongs to another project than {project.name!r}"
        )


def _target(value: Any) -> float:
    try:
        target = float(value)
    except (TypeError, ValueError) as e:
        raise CalibrationError(
            f"target_recall must be a number in (0, 1], not {value!r}"
        ) from e
    if not (math.isfinite(target) and 0 < target <= 1):
        raise CalibrationError(f"target_recall must be in (0, 1], not {value!r}")
    return target


def workload(scorer: ScorerModel, threshold: float) -> dict[str, Any]:
    """How many of the project's claims would be flagged at
    ``threshold``: those ``scorer`` scored below it, plus those unsafe
    without a score (not aligned: flagged whatever the threshold)."""
    scored = _version_scores(scorer).aggregate(
        scored=Count("claim", distinct=True),
        below=Count("claim", distinct=True, filter=Q(score__lt=threshold)),
    )
    claims = Claim.objects.filter(project_id=scorer.project_id).aggregate(
        total=Count("pk"),
        unscored_unsafe=Count(
            "pk", filter=Q(score__isnull=True, verdict=Verdict.UNSAFE)
        ),
    )
    flagged = scored["below"] + claims["unscored_unsafe"]
    total = claims["total"]
    return {
        "flagged": flagged,
        "total": total,
        "fraction": flagged / total if total else None,
        "scored": scored["scored"],
        "flagged_by_score": scored["below"],
        "unsafe_without_score": claims["unscored_unsafe"],
    }


def operating_point_preview(
    *, project: Project, scorer: ScorerModel, target_recall: Any
) -> dict[str, Any]:
    """The threshold that flags ``target_recall`` of the unsafe gold
    claims ``scorer`` scored, its precision and recall there, and the
    expert workload it implies on the whole project. Changes nothing.

    It aims a little above the target on the gold set (``gold_recall_aimed``)
    so that on new claims the recall reaches the target with
    RECALL_CONFIDENCE; the fewer unsafe gold labels, the higher it aims.

    The threshold is on the raw score: the calibration is monotone (it never
    reverses two scores), so a raw threshold flags the claims a calibrated
    one would and stays meaningful whether or not a calibration is fitted,
    or refitted later; the calibrated P(safe) at it is given for reading.

    Raises:
        CalibrationError: a scorer of another project, a target outside
            (0, 1], or no gold labels of both classes.
    """
    _same_project(project, scorer)
    target = _target(target_recall)
    data = gold_scores(scorer)
    _require_both_classes(data, scorer.version, "an operating point")
    aimed = confident_recall(target, data.n_unsafe, confidence=RECALL_CONFIDENCE)
    point = operating_point(
        data.scores, [not s for s in data.safe], target_recall=aimed
    )
    # The midpoint above the k-th unsafe score is inside [0, 1] unless that
    # score is 1 itself; a threshold of 1 then flags all but perfect scores.
    threshold = min(1.0, point.threshold)
    calibrated = None
    if scorer.calibration:
        calibrated = Calibration.from_json(scorer.calibration).apply([threshold])[0]
    return {
        "scorer": scorer.pk,
        "version": scorer.version,
        "target_recall": target,
        "confidence": RECALL_CONFIDENCE,
        "gold_recall_aimed": aimed,
        "threshold": threshold,
        "current_threshold": scorer.threshold,
        "calibrated_p_safe": calibrated,
        "gold": {
            "recall": point.recall,
            "precision": point.precision,
            "flagged": point.flagged_count,
            "flagged_fraction": point.flagged_fraction,
            "n": point.n,
            "n_unsafe": point.n_unsafe,
        },
        "workload": workload(scorer, threshold),
    }


def operating_point_apply(
    *, project: Project, scorer: ScorerModel, target_recall: Any, user=None
) -> ScorerModel:
    """Set ``scorer``'s threshold to the operating point of ``target_recall``
    and record it. An active scorer's verdicts are judged again by the check
    (``checking.scorer_threshold_set``: each keeps its verdict until the
    check replaces it) and the queue's uncertainty keys follow the threshold.

    Raises:
        CalibrationError: as :func:`operating_point_preview`.
    """

    point = operating_point_preview(
        project=project, scorer=scorer, target_recall=target_recall
    )
    with transaction.atomic():
        locked = ScorerModel.objects.select_for_update().get(pk=scorer.pk)
        scorer_threshold_set(scorer=locked, threshold=point["threshold"])
        locked.operating_point = {
            **point,
            "applied_at": timezone.now().isoformat(),
            "applied_by": getattr(user, "username", None),
        }
        locked.save(update_fields=["operating_point"])
    queue_keys_refresh(project=Project.objects.get(pk=project.pk))
    return locked


# --- the dashboard ------------------------------------------------------------------


def reliability(active: ScorerModel | None) -> dict[str, Any]:
    """The active scorer's reliability on today's gold labels, raw and by its
    stored calibration (in-sample: the labels it was fitted on, unless more
    came since), with each one's ECE."""
    out: dict[str, Any] = {
        "active": active.pk if active else None,
        "n": 0,
        "raw": None,
        "calibrated": None,
        "summary": calibration_summary(active) if active else None,
    }
    if active is None:
        return out
    data = gold_scores(active)
    out["n"], out["n_unsafe"] = len(data.scores), data.n_unsafe
    if not data.scores:
        return out
    out["raw"] = {
        "ece": expected_calibration_error(data.scores, data.safe, bins=DIAGRAM_BINS),
        "bins": reliability_diagram(data.scores, data.safe, bins=DIAGRAM_BINS),
    }
    stored = None
    if active.calibration:
        try:
            stored = Calibration.from_json(active.calibration)
        except ValueError:
            # Written by an older version of this module: the page shows the
            # raw diagram, and a refit replaces it.
            logger.warning("scorer %s: unreadable calibration", active.pk)
    if stored is not None:
        probs = stored.apply(data.scores, data.types)
        probs = [min(1.0, max(0.0, p)) for p in probs]
        out["calibrated"] = {
            "ece": expected_calibration_error(probs, data.safe, bins=DIAGRAM_BINS),
            "bins": reliability_diagram(probs, data.safe, bins=DIAGRAM_BINS),
        }
    return out


def reliability_svg(data: dict[str, Any]) -> str:
    series = [Series("Perfect calibration", [(0.0, 0.0), (1.0, 1.0)], markers=False)]
    for key, name in (("raw", "Raw score"), ("calibrated", "Calibrated")):
        part = data.get(key)
        if not part:
            continue
        bins = [b for b in part["bins"] if b["count"]]
        series.append(
            Series(
                f"{name} (ECE {part['ece']:.3f})",
                [(b["mean_predicted"], b["observed"]) for b in bins],
                notes=[
                    f"{name}: {b['count']} claims scored {b['lo']:.1f}-"
                    f"{b['hi']:.1f}, mean P(safe) {b['mean_predicted']:.3f}, "
                    f"observed safe {b['observed']:.3f}"
                    for b in bins
                ],
            )
        )
    return line_chart(
        series,
        title="Reliability on the gold set",
        x_label="Predicted P(safe)",
        y_label="Observed share safe (gold labels)",
        x_range=(0.0, 1.0),
        y_range=(0.0, 1.0),
        empty_message="No gold labels with scores of the active scorer yet",
        empty=data.get("raw") is None,
    )

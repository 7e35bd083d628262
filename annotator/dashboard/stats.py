"""Read-only queries behind the admin dashboard.

Everything is aggregated in SQL (counts, group-bys, a self-join for the
agreement pairs, buckets for the histogram), so a project of 100k claims
costs a dozen small queries; only aggregates and the gold set's (score, label)
pairs reach Python. The charts are drawn by :mod:`annotator.dashboard.charts`.
"""

from __future__ import annotations

from itertools import repeat
from typing import Any

from django.db.models import (
    Aggregate,
    Count,
    F,
    FloatField,
    IntegerField,
    Max,
    Min,
    Q,
)
from django.db.models.functions import Cast, Floor, Least

from annotator.claims.checking import finds_claims
from annotator.dashboard.charts import (
    BarSeries,
    Reference,
    Series,
    bar_chart,
    histogram,
    line_chart,
    pr_curve,
)
from annotator.labeling import gold
from annotator.labeling.adjudication import agreement_breakdown
from annotator.models import (
    ACTIVE_RUN_STATUSES,
    Claim,
    GradingRun,
    Label,
    Project,
    Role,
    RunStatus,
    ScorerModel,
    TrainingRun,
    Verdict,
)
from annotator.training.calibration import reliability, reliability_svg
from annotator.training.runs import training_blocked
from annotator.training.schedule import retrain_status
from pipeline.checkers import checker_class
from pipeline.evaluate import (
    cohen_kappa,
    flag_metrics,
    model_rank_rho,
    precision_recall_curve,
)

# A label's time on screen outside these bounds says nothing about an expert's
# pace: over a few minutes they took a break with the item open (the labeling
# page caps it at an hour); under a second nobody read the item (a script, a
# client replaying labels, a double submit). Such labels count as labels but do
# not set the pace, so one scripted session cannot show thousands an hour.
PACE_MIN_SECONDS = 1.0
PACE_MAX_SECONDS = 300.0
HISTOGRAM_BINS = 20
#: The source LLM of claims that name none.
UNKNOWN_MODEL = "unknown"


def overview(project: Project) -> dict[str, Any]:
    """Counts, the labelled share and the unsafe rate.

    The unsafe rate is over checked claims (verdict given), so a check
    in progress does not dilute it; the labelled share counts claims
    with at least one decisive (safe/unsafe) expert or imported label.
    """
    counts = Claim.objects.filter(project=project).aggregate(
        claims=Count("pk"),
        safe=Count("pk", filter=Q(verdict=Verdict.SAFE)),
        unsafe=Count("pk", filter=Q(verdict=Verdict.UNSAFE)),
        unscored=Count("pk", filter=Q(verdict=Verdict.UNSCORED)),
    )
    labels = Label.objects.filter(claim__project=project).aggregate(
        labels=Count("pk", filter=Q(label__in=Label.DECISIVE)),
        labelled=Count("claim", filter=Q(label__in=Label.DECISIVE), distinct=True),
        unsure=Count("pk", filter=Q(label=Label.Value.UNSURE)),
    )
    checked = counts["safe"] + counts["unsafe"] + counts["unscored"]
    total = counts["claims"]
    return {
        "documents": project.documents.count(),
        **counts,
        **labels,
        "checked": checked,
        "unchecked": total - checked,
        "labelled_share": labels["labelled"] / total if total else None,
        "unsafe_rate": counts["unsafe"] / checked if checked else None,
    }


def stages(project: Project, counts: dict[str, Any]) -> list[dict[str, Any]]:
    """The project's pipeline as stages (uploaded, found, checked, scored,
    labelled), each with its count, what it counts (``of``: the stage before
    it) and what it waits on (None: nothing), from ``overview``'s counts."""
    claims, checked = counts["claims"], counts["checked"]
    scored = counts["safe"] + counts["unsafe"]
    found_waits = None
    if not counts["documents"]:
        found_waits = "documents: none uploaded yet"
    elif not claims:
        found_waits = (
            "the checking worker, which finds them in the documents"
            if finds_claims(project)
            else "claims: none uploaded yet"
        )
    return [
        {
            "name": "uploaded",
            "count": counts["documents"],
            "of": None,
            "waits": None if counts["documents"] else "an upload",
        },
        {"name": "found", "count": claims, "of": None, "waits": found_waits},
        {
            "name": "checked",
            "count": checked,
            "of": claims,
            "waits": "the checking worker" if counts["unchecked"] else None,
        },
        {
            "name": "scored",
            "count": scored,
            "of": checked,
            "waits": _scoring_waits(project) if counts["unscored"] else None,
        },
        {
            "name": "labelled",
            "count": counts["labelled"],
            "of": claims,
            "waits": None
            if not claims or project.memberships.filter(role=Role.EXPERT).exists()
            else "an expert: none is a member yet",
        },
    ]


def _scoring_waits(project: Project) -> str:
    """What unscored claims wait on: a scorer training, one that cannot be
    trained yet, or checks that could not be made."""
    run = TrainingRun.objects.filter(
        project=project, status__in=ACTIVE_RUN_STATUSES
    ).first()
    if run is not None:
        return f"a scorer training (run {run.pk}, {run.progress:.0%} done)"
    if ScorerModel.objects.filter(project=project, is_active=True).exists():
        return "nothing: their checks could not be made (unverifiable)"
    if blocked := training_blocked(project):
        return f"a scorer, which cannot be trained yet: {blocked}"
    return "a scorer: none trained yet (expert labels train one)"


class Median(Aggregate):
    # Postgres's ordered-set aggregate (the app runs on Postgres only); a
    # FILTER clause after WITHIN GROUP is valid there.
    function = "PERCENTILE_CONT"
    template = "%(function)s(0.5) WITHIN GROUP (ORDER BY %(expressions)s)"
    output_field = FloatField()


def labels_per_hour(project: Project) -> list[dict[str, Any]]:
    """Per expert: labels and their median pace in labels per hour.

    The pace is 3600 over the median ``seconds_spent`` (the labeling page's
    time from showing an item to the decision) of the expert's labels with a
    plausible time, PACE_MIN_SECONDS to PACE_MAX_SECONDS: a median, so a
    handful of breaks or a scripted burst of zero-second labels do not move
    it, and those outside the bounds are counted apart (``too_fast``,
    ``breaks``) rather than averaged in. Labels without a duration (API
    clients that send none) count as labels only; imported labels have no
    expert and are left out. ``created_at`` gives each expert's first and
    last label. Unsure labels count: passing on an item is work too.
    """
    paced = Q(seconds_spent__gte=PACE_MIN_SECONDS, seconds_spent__lte=PACE_MAX_SECONDS)
    rows = (
        Label.objects.filter(claim__project=project, annotator__isnull=False)
        .values("annotator__username")
        .annotate(
            labels=Count("pk"),
            paced=Count("pk", filter=paced),
            too_fast=Count("pk", filter=Q(seconds_spent__lt=PACE_MIN_SECONDS)),
            breaks=Count("pk", filter=Q(seconds_spent__gt=PACE_MAX_SECONDS)),
            median_seconds=Median("seconds_spent", filter=paced),
            first=Min("created_at"),
            last=Max("created_at"),
        )
        .order_by("annotator__username")
    )
    out = []
    for row in rows:
        median = row["median_seconds"]
        timed = row["paced"] + row["too_fast"] + row["breaks"]
        out.append(
            {
                "annotator": row["annotator__username"],
                "labels": row["labels"],
                "paced": row["paced"],
                "too_fast": row["too_fast"],
                "breaks": row["breaks"],
                "untimed": row["labels"] - timed,
                "median_seconds": median,
                "per_hour": 3600 / median if median else None,
                "first": row["first"],
                "last": row["last"],
            }
        )
    return out


def agreement(project: Project) -> dict[str, Any]:
    """Cohen's kappa between experts on the claims several labelled.

    Pairs are two decisive labels on one claim by two different experts
    (one label per expert per claim is a constraint, so a self-join on
    the claim with ``a.pk < b.pk`` gives each pair once, earlier label
    first). The queue hands only overlap claims to several experts, so
    these are the overlap items; with more than two experts on an item every
    pair counts (pooled pairwise kappa). Unsure and imported labels are left
    out: they are not an expert's decision.
    """
    pair = dict(
        claim__project=project,
        annotator__isnull=False,
        label__in=Label.DECISIVE,
        claim__labels__annotator__isnull=False,
        claim__labels__label__in=Label.DECISIVE,
        claim__labels__pk__gt=F("pk"),
    )
    cells = (
        Label.objects.filter(**pair)
        .values("label", "claim__labels__label")
        .annotate(n=Count("pk"))
        .order_by()
    )
    matrix: dict[str, dict[str, int]] = {
        a: {b: 0 for b in Label.DECISIVE} for a in Label.DECISIVE
    }
    for cell in cells:
        matrix[cell["label"]][cell["claim__labels__label"]] = cell["n"]
    n = sum(sum(row.values()) for row in matrix.values())
    items = (
        Label.objects.filter(**pair).aggregate(n=Count("claim", distinct=True)).get("n")
    )
    # Four cells expanded back into pairs: as many tuples as overlap pairs.
    pairs = [
        (a, b)
        for a, row in matrix.items()
        for b, count in row.items()
        for _ in repeat(None, count)
    ]
    agree = matrix["safe"]["safe"] + matrix["unsafe"]["unsafe"]
    kappa = cohen_kappa(pairs)
    return {
        "kappa": kappa,
        "strength": _kappa_strength(kappa),
        "pairs": n,
        "items": items,
        "observed": agree / n if n else None,
        "matrix": matrix,
    }


def _kappa_strength(kappa: float | None) -> str:
    # Landis & Koch (1977), the usual reading of kappa.
    if kappa is None:
        return "undefined"
    for bound, word in (
        (0.0, "poor"),
        (0.2, "slight"),
        (0.4, "fair"),
        (0.6, "moderate"),
        (0.8, "substantial"),
    ):
        if kappa <= bound:
            return word
    return "almost perfect"


def scorer_versions(project: Project) -> list[ScorerModel]:
    return list(
        ScorerModel.objects.filter(project=project)
        .select_related("training_run")
        .order_by("-created_at", "-pk")
    )


# One F1 per scorer version: wherever the page says "F1" it is the gold-set F1
# (``ScorerModel.gold_f1``, the training run's ``metrics["gold"]``), measured
# on the gold documents' expert labels, which training never sees. Training's
# validation F1 is another figure on another split (silver pairs, for a scorer
# trained before any label) and is always shown under its own name.
VALIDATION_ON = {"silver": "silver pairs", "human": "expert labels"}
NO_GOLD_LABELS = "no gold labels yet"


def validation_f1(metrics: dict[str, Any] | None) -> dict[str, Any] | None:
    """Training's validation F1 from a version's or run's metrics, with what
    it was measured on; None when not recorded. Runs from before the split's
    source was recorded validated on expert labels (there was no other kind).
    """
    validation = (metrics or {}).get("validation") or {}
    if validation.get("f1") is None:
        return None
    source = validation.get("source") or "human"
    return {"f1": validation["f1"], "on": VALIDATION_ON.get(source, source)}


def version_rows(versions: list[ScorerModel]) -> list[dict[str, Any]]:
    return [{"scorer": v, "validation": validation_f1(v.metrics)} for v in versions]


def training_rows(runs: list[TrainingRun]) -> list[dict[str, Any]]:
    """A finished run's gold-set F1 is its version's; while a run trains only
    the latest epoch's validation F1 is known."""
    rows = []
    for run in runs:
        metrics = run.metrics or {}
        validation = validation_f1(metrics)
        if validation is None and run.val_f1 is not None:
            validation = {"f1": run.val_f1, "on": "latest epoch"}
        gold_metrics = metrics.get("gold") or {}
        rows.append(
            {
                "run": run,
                "version": metrics.get("version"),
                "gold_f1": gold_metrics.get("f1"),
                "validation": validation,
            }
        )
    return rows


def learning_curve(versions: list[ScorerModel]) -> dict[str, Any]:
    """Gold-set F1 against the expert labels each version was trained on
    (paper Figure 4); versions never measured on the gold set are left out."""
    measured = sorted(
        (v for v in versions if v.gold_f1 is not None),
        key=lambda v: (v.expert_labels, v.created_at),
    )
    return {
        "points": [
            {
                "version": v.version,
                "expert_labels": v.expert_labels,
                "gold_f1": v.gold_f1,
                "active": v.is_active,
            }
            for v in measured
        ],
        "unmeasured": [v.version for v in versions if v.gold_f1 is None],
    }


def llm_scores(project: Project) -> list[dict[str, Any]]:
    """Per source LLM: the SafePassage score (share of its checked claims
    judged safe) beside the human score (share of its decisive labels that
    say safe), as in paper Figure 5.

    The human score counts labels, not claims: an overlap item two
    experts disagree on counts half safe, which is what it is.
    """
    judged = (
        Claim.objects.filter(project=project)
        .values("model")
        .annotate(
            n=Count("pk"),
            checked=Count("pk", filter=~Q(verdict=Verdict.UNCHECKED)),
            safe=Count("pk", filter=Q(verdict=Verdict.SAFE)),
        )
        .order_by("model")
    )
    labelled = {
        row["claim__model"]: row
        for row in Label.objects.filter(
            claim__project=project, label__in=Label.DECISIVE
        )
        .values("claim__model")
        .annotate(labels=Count("pk"), safe=Count("pk", filter=Q(label="safe")))
        .order_by()
    }
    out = []
    for row in judged:
        human = labelled.get(row["model"])
        out.append(
            {
                "model": row["model"] or UNKNOWN_MODEL,
                "claims": row["n"],
                "checked": row["checked"],
                "safepassage_score": (
                    row["safe"] / row["checked"] if row["checked"] else None
                ),
                "labels": human["labels"] if human else 0,
                "human_score": human["safe"] / human["labels"] if human else None,
            }
        )
    return out


def gold_pr_curve(project: Project, active: ScorerModel | None) -> dict[str, Any]:
    """Precision-recall of the active scorer flagging unsafe, on the decisive
    labels of the gold documents (never trained on).

    ``Claim.score`` is the active scorer's: activating a scorer resets
    every verdict and the check rescores with it. Claims without a score
    (not aligned: unsafe whatever a scorer says) are left out, so this is the
    scorer's curve on today's labels, not the whole check's: its operating
    point is not the version's gold-set F1 (alignment and scorer together, as
    measured when it was registered) and the page does not call it F1. The
    gold set is a tenth of the labelled claims, thousands of pairs at
    most, so the pairs are fetched; ``gold_labels`` counts the unscored too.
    """
    labels = gold.restrict(
        Label.objects.filter(
            claim__project=project,
            label__in=Label.DECISIVE,
        ),
        project,
        gold=True,
        document_field="claim__document_id",
    ).values_list("claim__score", "label")
    scores, unsafe = [], []
    gold_labels = 0
    for score, label in labels.iterator(chunk_size=5000):
        gold_labels += 1
        if score is None:
            continue
        scores.append(score)
        unsafe.append(label == Label.Value.UNSAFE)
    threshold = active.threshold if active else project.nli_threshold
    operating = (
        flag_metrics([s < threshold for s in scores], unsafe) if scores else None
    )
    return {
        "gold_labels": gold_labels,
        "labels": len(scores),
        "unsafe": sum(unsafe),
        "threshold": threshold,
        "points": precision_recall_curve(scores, unsafe),
        "operating": operating,
    }


def evidence_histogram(project: Project, *, bins: int = HISTOGRAM_BINS) -> list[int]:
    """Counts of deciding-evidence scores (alignment scores, for extraction)
    in ``bins`` equal bins over [0, 1]."""
    bucket = Least(
        Cast(Floor(F("evidence_score") * bins), IntegerField()),
        bins - 1,
        output_field=IntegerField(),
    )
    rows = (
        Claim.objects.filter(project=project, evidence_score__isnull=False)
        .annotate(bucket=bucket)
        .values("bucket")
        .annotate(n=Count("pk"))
        .order_by()
    )
    counts = [0] * bins
    for row in rows:
        counts[min(bins - 1, max(0, row["bucket"]))] += row["n"]
    return counts


def retrain_takes(project: Project) -> str:
    """How long "Retrain now" will take, by the last finished run of the
    project (of any project before its first), so no one starts one blind."""
    finished = TrainingRun.objects.filter(
        status=RunStatus.SUCCEEDED, started_at__isnull=False, finished_at__isnull=False
    ).order_by("-finished_at")
    run = finished.filter(project=project).first()
    whose = "this project's last run"
    if run is None:
        run, whose = finished.first(), "the last run of another project"
    if run is None:
        return "No run has finished yet to time a retrain by."
    minutes = max(1, round((run.finished_at - run.started_at).total_seconds() / 60))
    return (
        f"A retrain takes about {minutes} minute{'s' if minutes != 1 else ''} "
        f"({whose}); checks go on meanwhile."
    )


def recent_runs(project: Project, *, limit: int = 8) -> dict[str, Any]:
    # One run of each kind is pending or running at a time (the services
    # refuse a second), and it is the newest: the first of the recent ones.
    training = list(TrainingRun.objects.filter(project=project)[:limit])
    grading = list(GradingRun.objects.filter(project=project)[:limit])
    return {
        "training": training,
        "grading": grading,
        "live_training": next(
            (r for r in training if r.status in ACTIVE_RUN_STATUSES), None
        ),
        "live_grading": next(
            (r for r in grading if r.status in ACTIVE_RUN_STATUSES), None
        ),
    }


def dashboard(project: Project) -> dict[str, Any]:
    """Everything the dashboard page shows, charts as SVG strings."""
    versions = scorer_versions(project)
    active = next((v for v in versions if v.is_active), None)
    pr = gold_pr_curve(project, active)
    runs = recent_runs(project)
    llms = llm_scores(project)
    checker = checker_class(project.kind)
    stats = {
        # Its own paper's figures (none: no reference line) and whether its
        # evidence is an alignment whose scores the histogram shows.
        "paper": checker.paper_figures,
        "aligns": checker.aligns,
        "overview": overview(project),
        "rates": labels_per_hour(project),
        "agreement": agreement(project),
        "agreement_detail": agreement_breakdown(project),
        "retrain": retrain_status(project),
        "retrain_takes": retrain_takes(project),
        "curve": learning_curve(versions),
        "llms": llms,
        # Worth a chart only where claims name the LLM that made them.
        "llms_named": any(r["model"] != UNKNOWN_MODEL for r in llms),
        "llm_rank_rho": model_rank_rho({r["model"]: r for r in llms}),
        "pr": pr,
        "reliability": reliability(active),
        "histogram": evidence_histogram(project),
        "versions": versions,
        "version_rows": version_rows(versions),
        "training_rows": training_rows(runs["training"]),
        # What stands in for a version's F1 before it has one.
        "no_gold_f1": (
            "not measured on the gold set" if pr["gold_labels"] else NO_GOLD_LABELS
        ),
        "pace": {
            "min_seconds": PACE_MIN_SECONDS,
            "max_minutes": PACE_MAX_SECONDS / 60,
        },
        "active": active,
        "runs": runs,
    }
    stats["charts"] = charts(project, stats)
    return stats


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def charts(project: Project, stats: dict[str, Any]) -> dict[str, str]:
    checker = checker_class(project.kind)
    kept_at = project.evidence_threshold()
    curve = stats["curve"]["points"]
    learning = [
        Series(
            "Scorer versions",
            [(p["expert_labels"], p["gold_f1"]) for p in curve],
            notes=[_version_note(p) for p in curve],
        )
    ]
    active_points = [p for p in curve if p["active"]]
    if active_points:
        learning.append(
            Series(
                "Active version",
                [(p["expert_labels"], p["gold_f1"]) for p in active_points],
                notes=[_version_note(p) for p in active_points],
                line=False,
            )
        )
    llms = stats["llms"]
    rates = [r for r in stats["rates"] if r["per_hour"] is not None]
    pr = stats["pr"]
    operating = []
    if pr["operating"]:
        op = pr["operating"]
        operating.append(
            Series(
                f"Active threshold {pr['threshold']:.2f}",
                [(op["recall"], op["precision"])],
                notes=[
                    f"threshold {pr['threshold']:.3f}: precision {op['precision']}, "
                    f"recall {op['recall']} (scorer alone, today's gold labels)"
                ],
            )
        )
    paper = checker.paper_figures
    if paper is not None:
        operating.append(
            Series(
                _sentence(paper.source.split(",")[0]),
                [(paper.recall, paper.precision)],
                notes=[
                    f"{_sentence(paper.source)}: precision {paper.precision}, "
                    f"recall {paper.recall}"
                ],
            )
        )
    return {
        "learning_curve": line_chart(
            learning,
            title="Learning curve: gold-set F1 by expert labels",
            x_label="Expert labels trained on",
            y_label="F1 flagging unsafe (gold set)",
            y_range=(0.0, 1.0),
            references=[]
            if paper is None
            else [Reference(paper.f1, f"{paper.source.split(',')[0]} F1 {paper.f1}")],
            empty_message="No scorer version measured on the gold set yet",
        ),
        "llms": bar_chart(
            [r["model"] for r in llms],
            [
                BarSeries(
                    "SafePassage score",
                    [r["safepassage_score"] for r in llms],
                    notes=[
                        f"{r['model']}: SafePassage score "
                        + _share(r["safepassage_score"])
                        + f" of {r['checked']} checked"
                        for r in llms
                    ],
                ),
                BarSeries(
                    "Human score",
                    [r["human_score"] for r in llms],
                    notes=[
                        f"{r['model']}: human score {_share(r['human_score'])} "
                        f"of {r['labels']} labels"
                        for r in llms
                    ],
                ),
            ],
            title="Per source LLM: share safe",
            value_label="Share of claims safe",
            value_range=(0.0, 1.0),
            empty_message="No claims yet",
        ),
        "rates": bar_chart(
            [r["annotator"] for r in rates],
            [
                BarSeries(
                    "Median pace",
                    [r["per_hour"] for r in rates],
                    notes=[
                        f"{r['annotator']}: median pace {r['per_hour']:.0f} "
                        f"labels/hour ({r['median_seconds']:.1f} s a label, over "
                        f"{r['paced']} of {r['labels']} labels)"
                        for r in rates
                    ],
                )
            ],
            title="Labels per hour per expert (median pace)",
            value_label="Labels per hour at the median time per label",
            references=[]
            if paper is None or paper.labels_per_hour is None
            else [
                Reference(paper.labels_per_hour, f"paper: {paper.labels_per_hour}/h")
            ],
            empty_message="No labels with a plausible time yet",
        ),
        "pr_curve": pr_curve(
            [
                Series(
                    f"Active scorer {stats['active'].version}"
                    if stats["active"]
                    else "Current scores",
                    [(p["recall"], p["precision"]) for p in pr["points"]],
                    notes=[
                        f"score <= {p['threshold']:.3f}: precision {p['precision']}, "
                        f"recall {p['recall']}"
                        for p in pr["points"]
                    ],
                )
            ],
            title="Precision-recall on the gold set",
            operating_points=operating,
            empty_message="No unsafe gold labels with scores yet",
        ),
        "reliability": reliability_svg(stats["reliability"]),
        "histogram": histogram(
            stats["histogram"],
            title="Evidence scores",
            x_label=checker.evidence_score_name,
            y_label="Claims",
            log_scale=True,
            markers=[Reference(kept_at, f"keep >= {kept_at:g}")]
            if kept_at is not None
            else [],
            empty_message="No evidence scored yet",
        ),
    }


def _version_note(point: dict[str, Any]) -> str:
    active = ", active" if point["active"] else ""
    return (
        f"{point['version']}{active}: F1 {point['gold_f1']:.3f} (gold set) "
        f"after {point['expert_labels']} expert labels"
    )


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"

"""When a project trains: its first scorer, before any label, and a new
version once enough new expert labels have come (beat looks every
RETRAIN_CHECK_SECONDS)."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.core.cache import cache
from django.db.models import F, Max, Value
from django.db.models.functions import Concat
from django.utils import timezone

from annotator.core.errors import ApplicationError
from annotator.labeling import gold
from annotator.models import (
    ACTIVE_RUN_STATUSES,
    Claim,
    Label,
    Project,
    RunStatus,
    ScorerModel,
    TrainingRun,
)
from annotator.training.runs import log_line, training_run_start

logger = logging.getLogger(__name__)


def new_expert_labels(project: Project) -> int:
    """Training-side claims labelled (or relabelled) since the later of
    the active scorer's training and the last finished training attempt.

    A failed or unpromoted attempt counts too: otherwise beat would retrain
    on the same labels every few minutes. Labels given while that run was
    preparing are counted again: at worst the next run starts a little early.
    """
    cutoffs = []
    active = (
        ScorerModel.objects.filter(project=project, is_active=True)
        .select_related("training_run")
        .first()
    )
    if active is not None:
        run = active.training_run
        cutoffs.append(run.started_at if run and run.started_at else active.created_at)
    last = TrainingRun.objects.filter(
        project=project,
        status__in=[RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.CANCELLED],
    ).aggregate(last=Max("started_at"))["last"]
    if last is not None:
        cutoffs.append(last)
    decisive = gold.restrict(
        Label.objects.filter(claim__project=project, label__in=Label.DECISIVE),
        project,
        gold=False,
        document_field="claim__document_id",
    )
    if cutoffs:
        decisive = decisive.filter(updated_at__gt=max(cutoffs))
    return decisive.values("claim_id").distinct().count()


def first_scorer_due(project: Project) -> TrainingRun | None:
    """Start the first scorer's run of a project that has claims and no
    active scorer, before any label: silver pairs of its own documents, from
    the starter scorer. Once per import: no run is started while one started
    after the newest claim exists (so a refused first scorer is not
    retrained every few minutes)."""
    if not settings.FIRST_SCORER_AUTO:
        return None
    if ScorerModel.objects.filter(project=project, is_active=True).exists():
        return None
    newest = Claim.objects.filter(project=project).aggregate(newest=Max("created_at"))[
        "newest"
    ]
    if (
        newest is None
        or TrainingRun.objects.filter(project=project, created_at__gte=newest).exists()
    ):
        return None
    try:
        return training_run_start(project=project, trigger=TrainingRun.Trigger.FIRST)
    except ApplicationError as e:
        logger.info("project %s: no first scorer: %s", project.pk, e)
        return None


#: Cache key of when :func:`retrain_due` last looked (an ISO time).
RETRAIN_CHECKED_KEY = "retrain-due:checked-at"


def retrain_status(project: Project) -> str:
    """Why the project has not retrained yet, or when it will: the new
    expert labels against ``retrain_min_labels`` and the next time beat
    looks (from the last time it did)."""
    if TrainingRun.objects.filter(
        project=project, status__in=ACTIVE_RUN_STATUSES
    ).exists():
        return "A training run is in progress."
    needed = project.retrain_min_labels
    if not needed:
        return "Scheduled retraining is off (retrain_min_labels is 0): retrain by hand."
    new = new_expert_labels(project)
    checked = cache.get(RETRAIN_CHECKED_KEY)
    interval = timedelta(seconds=settings.RETRAIN_CHECK_SECONDS)
    if checked:
        at = max(datetime.fromisoformat(checked) + interval, timezone.now())
        when = f"at the next check, about {timezone.localtime(at):%H:%M}"
    else:
        minutes = settings.RETRAIN_CHECK_SECONDS / 60
        when = f"when the scheduler next looks (every {minutes:g} min; not seen yet)"
    if new >= needed:
        return f"Due: {new} new expert labels of the {needed} needed; it starts {when}."
    return (
        f"Waiting for expert labels: {new} new since the last run, {needed} "
        f"needed ({needed - new} to go); checked again {when}."
    )


def retrain_due() -> list[int]:
    """Start a scheduled run for every idle project with at least
    ``retrain_min_labels`` new expert labels (0 turns it off), and a first
    scorer's run for every project without one; their ids."""
    cache.set(RETRAIN_CHECKED_KEY, timezone.now().isoformat(), None)
    started = []
    busy = TrainingRun.objects.filter(status__in=ACTIVE_RUN_STATUSES).values(
        "project_id"
    )
    for project in Project.objects.exclude(pk__in=busy):
        new = new_expert_labels(project) if project.retrain_min_labels else 0
        if not new or new < project.retrain_min_labels:
            run = first_scorer_due(project)
            if run is not None:
                started.append(run.pk)
            continue
        try:
            run = training_run_start(
                project=project, trigger=TrainingRun.Trigger.SCHEDULE
            )
        except ApplicationError as e:
            logger.info("project %s: not retraining: %s", project.pk, e)
            continue
        TrainingRun.objects.filter(pk=run.pk).update(
            log=Concat(F("log"), Value(log_line(f"{new} new expert labels")))
        )
        started.append(run.pk)
    return started

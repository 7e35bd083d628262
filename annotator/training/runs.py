"""Training runs on the shared lifecycle (annotator.runs.lifecycle):
starting, cancelling, failing, the sweep of silent ones, their log and the
folder a run writes.

A run is claimed with ``filter(status=PENDING).update(status=RUNNING)``: a
second delivery of its task finds nothing to do. A worker that dies leaves
its run RUNNING with a heartbeat that stops; the beat sweep marks it failed.
Nothing is registered before the model folder is complete, so a dead or
cancelled run never touches the active scorer.
"""

from __future__ import annotations

import logging
import shutil
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q, Value
from django.db.models.functions import Concat
from django.utils import timezone

from annotator.core.allowlists import project_scorers_dir
from annotator.core.dispatch import send_after_commit
from annotator.core.errors import ApplicationError
from annotator.kinds import kind_hook
from annotator.models import Project, RunStatus, ScorerModel, TrainingRun
from annotator.runs.lifecycle import run_create_alone, run_end, run_ended
from annotator.training.config import train_config

logger = logging.getLogger(__name__)


class TrainingStopped(Exception):
    """The run was cancelled, or marked failed by the sweep, while training."""


def log_line(message: str) -> str:
    """A line of a training run's log, with its time."""
    return f"{timezone.now():%Y-%m-%d %H:%M:%S} {message}\n"


def run_log(run_id: int, message: str) -> None:
    """Add ``message`` to the run's log (and the worker's)."""
    logger.info("training run %s: %s", run_id, message)
    TrainingRun.objects.filter(pk=run_id).update(
        log=Concat(F("log"), Value(log_line(message)))
    )


def scorers_dir(project: Project) -> Path:
    """Where the project's scorer versions are written."""
    return project_scorers_dir(project.pk)


def tmp_folder(run_id: int) -> Path | None:
    """The model folder a run writes until it is registered."""
    run = TrainingRun.objects.filter(pk=run_id).select_related("project").first()
    return None if run is None else scorers_dir(run.project) / f"run-{run_id}.tmp"


def tmp_folder_remove(run_id: int) -> None:
    """The run's unfinished model folder, and its finished one if the process
    died between moving it into place and registering it."""
    folder = tmp_folder(run_id)
    if folder is None:
        return
    shutil.rmtree(folder, ignore_errors=True)
    final = folder.with_suffix("")
    if not ScorerModel.objects.filter(path=str(final)).exists():
        shutil.rmtree(final, ignore_errors=True)


def training_blocked(project: Project) -> str | None:
    """Why the project's kind cannot train a scorer yet, or None."""
    blocked = kind_hook(project.kind).training_blocked
    return blocked(project) if blocked else None


def training_run_start(
    *,
    project: Project,
    trigger: str = TrainingRun.Trigger.MANUAL,
    created_by=None,
    params: dict[str, Any] | None = None,
    enqueue: bool = True,
) -> TrainingRun:
    """Create a pending run and queue it on the ``training`` queue.

    Raises:
        ApplicationError: a run of the project is already pending or running,
            ``params`` are not TrainConfig fields, or its kind cannot train
            yet (named).
    """
    if reason := training_blocked(project):
        raise ApplicationError(f"no scorer can be trained yet: {reason}")
    config = train_config(params, project=project)
    return run_create_alone(
        TrainingRun,
        project=project,
        noun="training",
        send=enqueue,
        trigger=trigger,
        created_by=created_by,
        params=dict(params or {}),
        base_model=config.base,
        log=log_line(f"queued ({TrainingRun.Trigger(trigger).label})"),
    )


def training_run_cancel(*, run: TrainingRun) -> TrainingRun:
    """Cancel a pending run at once; ask a running one to stop (its worker
    stops at the next training step and registers nothing).

    Raises:
        ApplicationError: the run has already finished.
    """
    with transaction.atomic():
        # Locked: a worker claiming the pending run waits, then finds it
        # cancelled and does nothing.
        run = TrainingRun.objects.select_for_update().get(pk=run.pk)
        if run.status == RunStatus.PENDING:
            run.status = RunStatus.CANCELLED
            run.finished_at = timezone.now()
            run.log += log_line("cancelled before a worker started it")
            run.save(update_fields=["status", "finished_at", "log"])
            run_ended(TrainingRun, run.pk)
        elif run.status == RunStatus.RUNNING:
            if not run.cancel_requested:
                run.cancel_requested = True
                run.log += log_line("cancel requested")
                run.save(update_fields=["cancel_requested", "log"])
        else:
            raise ApplicationError(
                f"training run {run.pk} has already finished ({run.status})"
            )
    return run


def training_run_fail(*, run_id: int, error: str) -> bool:
    """Mark a pending or running run failed; False if it had already ended."""
    done = run_end(
        TrainingRun,
        run_id,
        RunStatus.FAILED,
        note=error,
        log=Concat(F("log"), Value(log_line(f"failed: {error}"))),
    )
    if done:
        tmp_folder_remove(run_id)
    return bool(done)


def training_runs_sweep_stale(*, now=None) -> list[int]:
    """Fail running runs whose heartbeat is older than TRAINING_STALE_SECONDS
    (their worker died), and re-queue pending runs that long unclaimed (their
    message was lost; a duplicate is harmless, the claim refuses it)."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.TRAINING_STALE_SECONDS)
    silent = Q(status=RunStatus.RUNNING) & (
        Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, started_at__lt=cutoff)
    )
    stale = TrainingRun.objects.filter(silent)
    failed = []
    for run in stale.only("pk", "heartbeat_at"):
        seen = run.heartbeat_at.isoformat() if run.heartbeat_at else "never"
        error = (
            f"no heartbeat since {seen}: the worker stopped (killed, out of memory "
            "or lost); the active scorer is unchanged"
        )
        # The stale filter again in the UPDATE: a heartbeat that arrived since
        # the read above keeps the run alive.
        if run_end(
            TrainingRun,
            run.pk,
            RunStatus.FAILED,
            note=error,
            where=silent,
            log=Concat(F("log"), Value(log_line(f"failed: {error}"))),
        ):
            tmp_folder_remove(run.pk)
            failed.append(run.pk)
    lost = TrainingRun.objects.filter(status=RunStatus.PENDING, created_at__lt=cutoff)
    for pk in lost.values_list("pk", flat=True):
        send_after_commit(TrainingRun.TASK, pk)
    return failed

"""The retraining loop: training runs, the scorer registry and promotion.

A run trains on the project's expert labels outside the gold set (silver
stage first, its pairs cached per unlabelled pool), is measured on the gold
set's labels beside the active scorer, is registered as a new version and
becomes active only if its gold F1 is not worse. Activating any version by
hand (promote or roll back) is ``checking.scorer_activate``.

Runs are claimed with ``filter(status=PENDING).update(status=RUNNING)``: a
second delivery of the same task finds nothing to do. A worker that dies
leaves its run RUNNING with a heartbeat that stops; the beat sweep marks it
failed. Nothing is registered before the model folder is complete, so a dead
or cancelled run never touches the active scorer.
"""

from __future__ import annotations

import json
import logging
import shutil
import threading
import time
import zipfile
from dataclasses import fields
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import F, Max, Q, Value
from django.db.models.functions import Concat
from django.utils import timezone

from annotator.claims.checking import project_checker, scorer_activate
from annotator.core.allowlists import project_scorers_dir, scorer_source_problem
from annotator.core.dispatch import send_after_commit
from annotator.core.errors import ApplicationError
from annotator.labeling import gold
from annotator.models import (
    ACTIVE_RUN_STATUSES,
    Annotation,
    Prediction,
    Project,
    RunStatus,
    ScorerModel,
    TrainingRun,
)
from annotator.runs.lifecycle import run_claim, run_end, run_ended
from annotator.training.calibration import calibration_from_findings
from annotator.training.data import (
    LabelledData,
    graded_examples,
    labelled_data,
    silver_cached,
)
from pipeline.checkers import checker_class

logger = logging.getLogger(__name__)

# Share of TrainingRun.progress given to preparing the data (before) and to
# the gold evaluation (after); training takes the rest.
_PREPARE_SHARE, _EVALUATE_SHARE = 0.05, 0.05
_PROGRESS_WRITE_SECONDS = 1.0
#: The Celery task that runs a training run (``annotator.tasks``).
TRAIN_TASK = "annotator.tasks.train_scorer"


class TrainingStopped(Exception):
    """The run was cancelled, or marked failed by the sweep, while training."""


# --- labels and data ---------------------------------------------------------


def train_config(
    params: dict[str, Any] | None = None, *, project: Project | None = None
):
    """TrainConfig from its defaults, settings.TRAINING_CONFIG, then ``params``
    (a run of ``project``, whose own scorer versions it may start from).

    Raises:
        ApplicationError: an unknown field or a value of the wrong type.
    """
    from pipeline.train import TrainConfig

    known = {f.name: f for f in fields(TrainConfig)}
    merged = {**settings.TRAINING_CONFIG, **(params or {})}
    if "base" in (params or {}):
        merged["base"] = training_base(params["base"], project=project)
    if "base" not in merged:
        merged["base"] = default_base()
    unknown = sorted(set(merged) - set(known))
    if unknown:
        raise ApplicationError(
            f"unknown training parameter(s) {', '.join(unknown)}; "
            f"known: {', '.join(sorted(known))}"
        )
    defaults = TrainConfig()
    values = {}
    for name, value in merged.items():
        default = getattr(defaults, name)
        if name == "stages":
            if (
                not isinstance(value, list | tuple)
                or not value
                or not set(value) <= {"silver", "human"}
            ):
                raise ApplicationError('stages: a list of "silver" and/or "human"')
            value = tuple(value)
        elif value is None:
            if name not in _NULLABLE:
                raise ApplicationError(f"{name}: may not be null")
        elif not _same_type(value, default):
            expected = "str" if name == "device" else type(default).__name__
            raise ApplicationError(f"{name}: expected {expected}, got {value!r}")
        elif name in _LIMITS and not _LIMITS[name][0] <= value <= _LIMITS[name][1]:
            low, high = _LIMITS[name]
            raise ApplicationError(f"{name}: {value!r} is not in [{low}, {high}]")
        values[name] = value
    return TrainConfig(**values)


def training_base(value: Any, *, project: Project | None) -> str:
    """The model a run's ``base`` names. The base is loaded from disk or a
    hub, so a web user picks among the deployment's models and shared folders,
    or names one of the project's own scorer versions by id: never by path,
    as every project's folders are predictable (settings.TRAINING_CONFIG is
    trusted and never comes here).

    Raises:
        ApplicationError: anything else, another project's version included.
    """
    if isinstance(value, str):
        problem = scorer_source_problem(value)
        if problem:
            raise ApplicationError(f"base: {problem}")
        return value
    if not isinstance(value, int) or isinstance(value, bool):
        raise ApplicationError(
            f"base: {value!r} is neither a model name, a folder nor a scorer id "
            "(an integer)"
        )
    # An id out of bigint's range would be a database error, not a miss.
    scorer = None
    if project is not None and 0 < value < 2**63:
        scorer = ScorerModel.objects.filter(project=project, pk=value).first()
    if scorer is None:
        # The same answer for another project's id: ids are not disclosed.
        raise ApplicationError(f"base: this project has no scorer version {value}")
    problem = scorer_source_problem(scorer.path, project_id=scorer.project_id)
    if problem:
        raise ApplicationError(f"base: scorer {scorer.version}: {problem}")
    return scorer.path


def default_base() -> str:
    """The best base the deployment has (:func:`pipeline.bases.best_base`
    over its settings): the starter once it is built."""
    from pipeline.bases import best_base

    base, _ = best_base(
        {
            "STARTER_SCORER": str(settings.STARTER_SCORER),
            "NLI_BASE": str(settings.NLI_BASE),
            "NLI_MODEL": settings.NLI_MODEL,
        }
    )
    return base


# No unlimited silver (a null silver_limit): one training worker serves every
# project, so epochs, length and silver pairs are bounded by the deployment.
_NULLABLE = {"device"}
_LIMITS: dict[str, tuple[float, float]] = {
    "silver_epochs": (0, settings.TRAINING_MAX_EPOCHS),
    "human_epochs": (0, settings.TRAINING_MAX_EPOCHS),
    "patience": (1, settings.TRAINING_MAX_EPOCHS),
    "batch_size": (1, 512),
    "learning_rate": (1e-8, 1.0),
    "max_length": (8, settings.TRAINING_MAX_LENGTH),
    "validation_share": (0.01, 0.9),
    "silver_flag_precision": (0.0, 1.0),
    "silver_limit": (0, settings.TRAINING_MAX_SILVER_LIMIT),
    "replay": (0.0, 100.0),
}


def _same_type(value: Any, default: Any) -> bool:
    if isinstance(value, bool) or isinstance(default, bool):
        return isinstance(value, bool) and isinstance(default, bool)
    if default is None:  # device
        return isinstance(value, str)
    if isinstance(default, float):
        return isinstance(value, int | float)
    return isinstance(value, type(default))


# --- starting, cancelling, sweeping ------------------------------------------


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
            or ``params`` are not TrainConfig fields.
    """
    config = train_config(params, project=project)
    with transaction.atomic():
        # The project row lock serialises starts: two admins (or an admin and
        # beat) cannot both pass the check below.
        Project.objects.select_for_update().filter(pk=project.pk).first()
        busy = TrainingRun.objects.filter(
            project=project, status__in=ACTIVE_RUN_STATUSES
        ).first()
        if busy is not None:
            raise ApplicationError(
                f"training run {busy.pk} of project {project.name!r} is already "
                f"{busy.status}; wait for it or cancel it"
            )
        run = TrainingRun.objects.create(
            project=project,
            trigger=trigger,
            created_by=created_by,
            params=dict(params or {}),
            base_model=config.base,
            log=_line(f"queued ({TrainingRun.Trigger(trigger).label})"),
        )
        if enqueue:
            send_after_commit(TRAIN_TASK, run.pk)
    return run


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
            run.log += _line("cancelled before a worker started it")
            run.save(update_fields=["status", "finished_at", "log"])
            run_ended(TrainingRun, run.pk)
        elif run.status == RunStatus.RUNNING:
            if not run.cancel_requested:
                run.cancel_requested = True
                run.log += _line("cancel requested")
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
        log=Concat(F("log"), Value(_line(f"failed: {error}"))),
    )
    if done:
        _remove_tmp_folder(run_id)
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
            log=Concat(F("log"), Value(_line(f"failed: {error}"))),
        ):
            _remove_tmp_folder(run.pk)
            failed.append(run.pk)
    lost = TrainingRun.objects.filter(status=RunStatus.PENDING, created_at__lt=cutoff)
    for pk in lost.values_list("pk", flat=True):
        send_after_commit(TRAIN_TASK, pk)
    return failed


# --- deciding when to retrain -------------------------------------------------


def new_expert_labels(project: Project) -> int:
    """Training-side predictions labelled (or relabelled) since the later of
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
    annotations = gold.restrict(
        Annotation.objects.filter(
            prediction__project=project, label__in=Annotation.DECISIVE
        ),
        project,
        gold=False,
        document_field="prediction__document_id",
    )
    if cutoffs:
        annotations = annotations.filter(updated_at__gt=max(cutoffs))
    return annotations.values("prediction_id").distinct().count()


def first_scorer_due(project: Project) -> TrainingRun | None:
    """Start the first scorer's run of a project that has predictions and no
    active scorer, before any label: silver pairs of its own documents, from
    the starter scorer. Once per import: no run is started while one started
    after the newest prediction exists (so a refused first scorer is not
    retrained every few minutes)."""
    if not settings.FIRST_SCORER_AUTO:
        return None
    if ScorerModel.objects.filter(project=project, is_active=True).exists():
        return None
    newest = Prediction.objects.filter(project=project).aggregate(
        newest=Max("created_at")
    )["newest"]
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
            log=Concat(F("log"), Value(_line(f"{new} new expert labels")))
        )
        started.append(run.pk)
    return started


# --- executing a run -----------------------------------------------------------


def _line(message: str) -> str:
    return f"{timezone.now():%Y-%m-%d %H:%M:%S} {message}\n"


def _log(run_id: int, message: str) -> None:
    logger.info("training run %s: %s", run_id, message)
    TrainingRun.objects.filter(pk=run_id).update(
        log=Concat(F("log"), Value(_line(message)))
    )


def scorers_dir(project: Project) -> Path:
    return project_scorers_dir(project.pk)


def _tmp_folder(run_id: int) -> Path | None:
    run = TrainingRun.objects.filter(pk=run_id).select_related("project").first()
    return None if run is None else scorers_dir(run.project) / f"run-{run_id}.tmp"


def _remove_tmp_folder(run_id: int) -> None:
    """The run's unfinished model folder, and its finished one if the process
    died between moving it into place and registering it."""
    folder = _tmp_folder(run_id)
    if folder is None:
        return
    shutil.rmtree(folder, ignore_errors=True)
    final = folder.with_suffix("")
    if not ScorerModel.objects.filter(path=str(final)).exists():
        shutil.rmtree(final, ignore_errors=True)


class _Heartbeat:
    """Writes heartbeat_at every TRAINING_HEARTBEAT_SECONDS from a thread, so
    a run stays visibly alive through long steps without progress (aligning,
    loading a model, the gold evaluation). It dies with the process, which is
    the point: the sweep then sees the silence."""

    def __init__(self, run_id: int):
        self.run_id = run_id
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name=f"training-{run_id}-heartbeat", daemon=True
        )

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        try:
            while not self._stop.wait(settings.TRAINING_HEARTBEAT_SECONDS):
                TrainingRun.objects.filter(
                    pk=self.run_id, status=RunStatus.RUNNING
                ).update(heartbeat_at=timezone.now())
        except Exception:
            logger.exception("training run %s: heartbeat thread failed", self.run_id)
        finally:
            connection.close()  # this thread's own connection


class _ProgressWriter:
    """The pipeline's on_progress: live fields at most once a second (plus
    every validation), and the place a cancel request takes effect."""

    def __init__(self, run_id: int, stages: tuple[str, ...], extra=None):
        self.run_id = run_id
        self.stages = stages
        self.extra = extra
        self.last = 0.0

    def __call__(self, progress) -> None:
        from pipeline.errors import TrainingCancelled

        if self.extra is not None:
            self.extra(progress)
        now = time.monotonic()
        validation = progress.val_f1 is not None
        if not validation and now - self.last < _PROGRESS_WRITE_SECONDS:
            return
        self.last = now
        index = (
            self.stages.index(progress.stage) if progress.stage in self.stages else 0
        )
        done = (index + progress.step / max(progress.steps, 1)) / len(self.stages)
        values: dict[str, Any] = dict(
            stage=progress.stage,
            epoch=progress.epoch,
            progress=round(
                _PREPARE_SHARE + (1 - _PREPARE_SHARE - _EVALUATE_SHARE) * done, 4
            ),
            heartbeat_at=timezone.now(),
        )
        if progress.loss is not None:
            values["loss"] = progress.loss
        if validation:
            values["val_f1"] = progress.val_f1
            values["log"] = Concat(
                F("log"),
                Value(
                    _line(
                        f"{progress.stage} epoch {progress.epoch}: validation F1 "
                        f"{progress.val_f1:.3f}"
                    )
                ),
            )
        # One statement both writes and checks: 0 rows means cancel requested
        # or the run no longer running (swept as failed, deleted).
        updated = TrainingRun.objects.filter(
            pk=self.run_id, status=RunStatus.RUNNING, cancel_requested=False
        ).update(**values)
        if not updated:
            raise TrainingCancelled(f"training run {self.run_id}: stop requested")


def _check_still_wanted(run_id: int) -> None:
    if not TrainingRun.objects.filter(
        pk=run_id, status=RunStatus.RUNNING, cancel_requested=False
    ).exists():
        raise TrainingStopped


def _stage(run_id: int, stage: str, progress: float | None = None) -> None:
    values: dict[str, Any] = {"stage": stage, "heartbeat_at": timezone.now()}
    if progress is not None:
        values["progress"] = progress
    TrainingRun.objects.filter(pk=run_id, status=RunStatus.RUNNING).update(**values)


def training_run_execute(*, run_id: int, on_progress=None) -> TrainingRun | None:
    """Claim a pending run and train, evaluate, register and maybe promote.

    Safe to call twice: only a pending run is claimed (None: no such run).
    ``on_progress`` (a pipeline ProgressCallback, e.g. progress bars) sees
    every step too.
    Expected failures (too few labels, one class missing) are recorded on the
    run; an unexpected one is recorded and raised.
    """
    from pipeline.errors import PipelineError, TrainingCancelled

    claimed = run_claim(
        TrainingRun,
        run_id,
        resume=False,
        stage="preparing",
        log=Concat(F("log"), Value(_line("started"))),
    )
    if not claimed:
        # Finished, cancelled, claimed by an earlier delivery, or deleted.
        return TrainingRun.objects.filter(pk=run_id).first()
    try:
        with _Heartbeat(run_id):
            _execute(run_id, on_progress)
    except (TrainingCancelled, TrainingStopped):
        _remove_tmp_folder(run_id)
        run_end(
            TrainingRun,
            run_id,
            RunStatus.CANCELLED,
            where=Q(status=RunStatus.RUNNING),
            log=Concat(F("log"), Value(_line("cancelled; nothing registered"))),
        )
    except (PipelineError, ApplicationError) as e:
        training_run_fail(run_id=run_id, error=str(e))
    except BaseException as e:
        # A bug, or the process told to stop (Ctrl-C, a worker's cold
        # shutdown): a run cannot resume, so it ends here, recorded.
        training_run_fail(run_id=run_id, error=f"{type(e).__name__}: {e}")
        raise
    return TrainingRun.objects.get(pk=run_id)


def _execute(run_id: int, on_progress) -> None:
    from pipeline.errors import PipelineError
    from pipeline.score import read_metadata
    from pipeline.train import train_scorer

    run = TrainingRun.objects.select_related("project").get(pk=run_id)
    project = run.project
    config = train_config(run.params, project=project)
    log = lambda message: _log(run_id, message)  # noqa: E731
    data = labelled_data(project, gold_set=False)
    checker = project_checker(project, data.documents)
    unsafe = sum(lab.label == "unsafe" for lab in data.labels.values())
    log(
        f"{len(data.labels)} expert labels ({unsafe} unsafe) outside the gold set, "
        f"{len(data.predictions)} predictions on {len(data.documents)} documents"
    )
    TrainingRun.objects.filter(pk=run_id).update(
        expert_labels=len(data.labels), base_model=config.base
    )
    silver = None
    if "silver" in config.stages:
        _stage(run_id, "silver pairs")
        silver = silver_cached(project, data, config, checker, log)
        silver += graded_examples(project, data, checker, log)
    _check_still_wanted(run_id)
    _stage(run_id, "loading", _PREPARE_SHARE)
    tmp = scorers_dir(project) / f"run-{run_id}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    metadata = train_scorer(
        checker,
        data.predictions,
        data.labels,
        tmp,
        config=config,
        on_progress=_ProgressWriter(run_id, config.stages, on_progress),
        silver=silver,
    )
    log(
        f"trained on {metadata['device']} in {metadata['train_seconds']} s: "
        f"threshold {metadata['threshold']:.3f}, validation F1 "
        f"{metadata['validation']['f1']:.3f}"
    )
    _check_still_wanted(run_id)
    _stage(run_id, "evaluating", 1 - _EVALUATE_SHARE)
    gold_data = labelled_data(project, gold_set=True, labelled_only=True)
    measured = gold_measure(
        project=project,
        data=gold_data,
        model=str(tmp),
        threshold=metadata["threshold"],
    )
    new_gold = None if measured is None else measured[0]
    active = ScorerModel.objects.filter(project=project, is_active=True).first()
    active_gold = None
    if active is not None and new_gold is not None:
        try:
            active_gold = gold_evaluate(
                project=project,
                data=gold_data,
                model=active.path,
                threshold=active.threshold,
            )
        except (PipelineError, OSError) as e:
            log(f"the active scorer {active.version} could not be evaluated: {e}")
    if new_gold is None:
        log("gold set: no expert labels yet, nothing to measure on")
    else:
        mine = f"gold F1 {new_gold['f1']:.3f} on {new_gold['n']} labels"
        theirs = (
            f", active {active.version}: {active_gold['f1']:.3f}"
            if active_gold is not None
            else ""
        )
        log(mine + theirs)
    fitted = {}
    if measured is not None:
        fitted = calibration_from_findings(measured[1], gold_data, log=log)
    _check_still_wanted(run_id)
    final = scorers_dir(project) / f"run-{run_id}"
    shutil.rmtree(final, ignore_errors=True)
    tmp.replace(final)
    _register(
        run_id=run_id,
        project=project,
        folder=final,
        metadata=read_metadata(final),
        expert_labels=len(data.labels),
        new_gold=new_gold,
        active=active,
        active_gold=active_gold,
        calibration=fitted,
    )


def gold_evaluate(
    *, project: Project, data: LabelledData, model: str, threshold: float
) -> dict[str, Any] | None:
    """Precision / recall / F1 of flagging unsafe on the gold set's labels,
    the project's whole check counted (for extraction, alignment then the
    scorer); None without labels."""
    measured = gold_measure(
        project=project, data=data, model=model, threshold=threshold
    )
    return None if measured is None else measured[0]


def gold_measure(
    *, project: Project, data: LabelledData, model: str, threshold: float
) -> tuple[dict[str, Any], list[Any]] | None:
    """``gold_evaluate``'s metrics and the findings they count (their scores
    fit the version's calibration); None without labels."""
    from pipeline.evaluate import flag_metrics
    from pipeline.score import NLIScorer

    if not data.labels:
        return None
    checker = project_checker(project, data.documents)
    report = checker.check(
        [p for p in data.predictions if p.id in data.labels],
        scorer=NLIScorer(model, threshold=threshold),
    )
    unsafe = [data.labels[f.claim_id].label == "unsafe" for f in report.findings]
    metrics = flag_metrics([f.verdict == "unsafe" for f in report.findings], unsafe)
    return metrics, report.findings


def _next_version(project: Project) -> str:
    numbers = [
        int(v[1:])
        for v in ScorerModel.objects.filter(project=project).values_list(
            "version", flat=True
        )
        if v[:1] == "v" and v[1:].isdigit()
    ]
    return f"v{max(numbers, default=0) + 1}"


def promotion_decision(
    *,
    active: ScorerModel | None,
    new_gold: dict | None,
    active_gold: dict | None,
    validation: dict | None = None,
) -> tuple[bool, str]:
    """Whether a new version becomes active, and why (shown in the run log).

    Not worse on the gold set than the active scorer, both measured now on
    the same labels. Without gold labels nothing can show it is not worse, so
    the active scorer stays. A first scorer is promoted, unless it was
    trained without labels and does no better on its silver validation than
    flagging everything (what an untuned base amounts to): it learned nothing
    that can be measured, and "unscored" says more.
    """
    if active is None:
        if validation and validation.get("source") == "silver":
            # Its best F1: the threshold it keeps is set for precision.
            f1, floor = validation["best_f1"], validation["flag_all_f1"]
            if f1 <= floor:
                return False, (
                    f"silver validation F1 {f1:.3f} is no better than flagging "
                    f"everything ({floor:.3f})"
                )
            return True, (
                f"no active scorer; silver validation F1 {f1:.3f} beats flagging "
                f"everything ({floor:.3f})"
            )
        return True, "no active scorer"
    if new_gold is None:
        return False, "no gold labels to compare on; the active scorer stays"
    if active_gold is None:
        return True, f"the active scorer {active.version} could not be evaluated"
    if new_gold["f1"] >= active_gold["f1"]:
        return True, (
            f"gold F1 {new_gold['f1']:.3f} >= {active_gold['f1']:.3f} "
            f"of {active.version}"
        )
    return False, (
        f"gold F1 {new_gold['f1']:.3f} < {active_gold['f1']:.3f} of {active.version}"
    )


def _register(
    *,
    run_id: int,
    project: Project,
    folder: Path,
    metadata: dict,
    expert_labels: int,
    new_gold: dict | None,
    active: ScorerModel | None,
    active_gold: dict | None,
    calibration: dict | None = None,
) -> ScorerModel:
    with transaction.atomic():
        run = TrainingRun.objects.select_for_update().get(pk=run_id)
        if run.status != RunStatus.RUNNING or run.cancel_requested:
            shutil.rmtree(folder, ignore_errors=True)
            raise TrainingStopped
        # Serialises version numbers and activation with scorer_activate.
        list(
            ScorerModel.objects.select_for_update()
            .filter(project=project)
            .values_list("pk", flat=True)
        )
        current = ScorerModel.objects.filter(project=project, is_active=True).first()
        if current is not None and (active is None or current.pk != active.pk):
            # An admin activated another version while this one trained: their
            # choice stands; this one waits to be promoted by hand.
            promote, reason = (
                False,
                (f"the active scorer changed to {current.version} during training"),
            )
        else:
            promote, reason = promotion_decision(
                active=active,
                new_gold=new_gold,
                active_gold=active_gold,
                validation=metadata["validation"],
            )
        version = _next_version(project)
        metadata.update(name=f"project{project.pk}-{version}", version=version)
        from pipeline.score import METADATA_FILE

        (folder / METADATA_FILE).write_text(
            json.dumps(metadata, indent=2), encoding="utf-8"
        )
        metrics = {
            "validation": metadata["validation"],
            "gold": new_gold,
            "active_gold": (
                {"version": active.version, **active_gold}
                if active is not None and active_gold is not None
                else None
            ),
            "stages": metadata["stages"],
            "device": metadata["device"],
            "train_seconds": metadata["train_seconds"],
            "promotion": {"promoted": promote, "reason": reason},
        }
        scorer = ScorerModel.objects.create(
            project=project,
            version=version,
            base_model=metadata["base_model"],
            path=str(folder),
            label_counts=metadata["label_counts"],
            threshold=min(1.0, max(0.0, float(metadata["threshold"]))),
            metrics=metrics,
            expert_labels=expert_labels,
            gold_f1=None if new_gold is None else new_gold["f1"],
            calibration=calibration or {},
            training_run=run,
        )
        run.status = RunStatus.SUCCEEDED
        run.finished_at = timezone.now()
        run.progress, run.stage = 1.0, "done"
        run.metrics = {
            "scorer": scorer.pk,
            "version": version,
            "promoted": promote,
            "reason": reason,
            "gold": new_gold,
            "validation": metadata["validation"],
        }
        run.log += _line(
            f"registered {version}; "
            + ("promoted" if promote else "not promoted")
            + f": {reason}"
        )
        run.save(
            update_fields=[
                "status",
                "finished_at",
                "progress",
                "stage",
                "metrics",
                "log",
            ]
        )
        run_ended(TrainingRun, run.pk)
        if promote:
            # Rescoring every prediction with it is queued on commit.
            scorer_activate(scorer=scorer)
    return scorer


# --- the model card and download ------------------------------------------------


def model_card(scorer: ScorerModel) -> str:
    """README.md of a downloaded scorer: what it is, what it was trained on,
    how good it is on the gold set, and how to load it."""
    counts = scorer.label_counts or {}
    gold_metrics = (scorer.metrics or {}).get("gold") or {}
    validation = (scorer.metrics or {}).get("validation") or {}

    def metric(m: dict, key: str) -> str:
        value = m.get(key)
        return "n/a" if value is None else f"{value:.3f}"

    def row(name: str, m: dict) -> str:
        cells = [metric(m, k) for k in ("precision", "recall", "f1")]
        return f"| {name} | {m.get('n', 0)} | " + " | ".join(cells) + " |"

    checker = checker_class(scorer.project.kind)
    card = checker.scorer_card
    premise, hypothesis = card.example
    run = f" (training run {scorer.training_run_id})" if scorer.training_run_id else ""
    expert = f"{counts.get('human_train', 'n/a')} expert"
    expert += f" ({counts.get('human_train_unsafe', 'n/a')} unsafe)"
    silver = f"{counts.get('silver', 'n/a')} silver"
    silver += f" ({counts.get('silver_unsafe', 'n/a')} unsafe)"
    return f"""---
library_name: sentence-transformers
pipeline_tag: text-classification
tags: [cross-encoder, safepassage, hallucination-detection]
base_model: {scorer.base_model}
---

# SafePassage scorer {scorer.project.name} / {scorer.version}

A cross-encoder for {checker.title.lower()}: it scores {card.reads}. A
claim whose score is below the threshold **{scorer.threshold:.4f}** is
flagged *unsafe* (not supported).

- Base model: `{scorer.base_model}`
- Registered: {scorer.created_at:%Y-%m-%d %H:%M} UTC{run}
- Expert labels (outside the gold test set): {scorer.expert_labels}
- Training pairs: {expert}, {silver};
  validation: {counts.get("validation", "n/a")}

## Evaluation (flagging unsafe claims)

| split | n | precision | recall | F1 |
| --- | --- | --- | --- | --- |
{row("gold test set", gold_metrics)}
{row("validation", validation)}

The gold test set is a fixed random slice of the project's documents whose
labels are never trained on. Metrics count the whole check: a claim its
evidence already settles is flagged or passed before the scorer runs.

## Intended use

Flagging claims their evidence does not support, in documents like the
project's, as SafePassage's check of {checker.title.lower()}. It is not a
general NLI model: it was tuned on one project's claims and documents, and
its threshold was chosen for F1 on that project's labels. Keep a human in the
loop for flagged items.

## Usage

```python
from sentence_transformers import CrossEncoder

model = CrossEncoder("path/to/this/folder")
score = model.predict([({premise!r}, {hypothesis!r})])[0]
unsafe = score < {scorer.threshold:.4f}
```

The model has one output logit; `CrossEncoder.predict` applies the sigmoid
and returns p(supports). With the SafePassage pipeline:
`pipeline.score.NLIScorer("path/to/this/folder")` reads the threshold from
`metadata.json`.
"""


def scorer_archive(scorer: ScorerModel, out) -> None:
    """Write the scorer folder plus its README.md model card as a zip to the
    binary file ``out``.

    Raises:
        ApplicationError: the folder is not on this machine (e.g. the packaged
            base model, or a worker-only volume).
    """
    problem = scorer_source_problem(scorer.path, project_id=scorer.project_id)
    if problem:
        raise ApplicationError(problem)
    folder = Path(scorer.path)
    if not folder.is_dir():
        raise ApplicationError(
            f"scorer {scorer.version}: {scorer.path!r} is not a model folder on "
            "this server (a packaged or hub model, or a folder only the workers "
            "see)"
        )
    root = f"{scorer.project.name}-{scorer.version}".replace("/", "-").replace(" ", "_")
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        inside = folder.resolve()
        for path in sorted(folder.rglob("*")):
            # A link could point anywhere on the server: never follow one out.
            if not path.resolve().is_relative_to(inside):
                continue
            if path.is_file() and path.name != "README.md":
                # Weights barely compress: store them, deflate the text files.
                kind = (
                    zipfile.ZIP_STORED
                    if path.suffix in (".safetensors", ".bin")
                    else zipfile.ZIP_DEFLATED
                )
                archive.write(
                    path, f"{root}/{path.relative_to(folder)}", compress_type=kind
                )
        archive.writestr(f"{root}/README.md", model_card(scorer))

"""Executing a training run: train on the project's expert labels outside
the gold set (silver stage first, its pairs cached per unlabelled pool),
measure on the gold set beside the active scorer, register the version
(``training.registry``), with a heartbeat and live progress throughout."""

from __future__ import annotations

import dataclasses
import logging
import shutil
import threading
import time
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import F, Q, Value
from django.db.models.functions import Concat
from django.utils import timezone

from annotator.claims.checking import project_checker
from annotator.core.errors import ApplicationError
from annotator.models import RunStatus, ScorerModel, TrainingRun
from annotator.runs.lifecycle import run_claim, run_end
from annotator.training.calibration import calibration_from_findings
from annotator.training.config import train_config
from annotator.training.data import graded_examples, labelled_data, silver_cached
from annotator.training.registry import gold_evaluate, gold_measure, version_register
from annotator.training.runs import (
    TrainingStopped,
    log_line,
    run_log,
    scorers_dir,
    tmp_folder_remove,
    training_run_fail,
)
from pipeline.errors import PipelineError, TrainingCancelled
from pipeline.score import read_metadata
from pipeline.train import train_scorer

logger = logging.getLogger(__name__)

# Share of TrainingRun.progress given to preparing the data (before) and to
# the gold evaluation (after); training takes the rest.
_PREPARE_SHARE, _EVALUATE_SHARE = 0.05, 0.05
_PROGRESS_WRITE_SECONDS = 1.0


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
                    log_line(
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

    claimed = run_claim(
        TrainingRun,
        run_id,
        resume=False,
        stage="preparing",
        log=Concat(F("log"), Value(log_line("started"))),
    )
    if not claimed:
        # Finished, cancelled, claimed by an earlier delivery, or deleted.
        return TrainingRun.objects.filter(pk=run_id).first()
    try:
        with _Heartbeat(run_id):
            _execute(run_id, on_progress)
    except (TrainingCancelled, TrainingStopped):
        tmp_folder_remove(run_id)
        run_end(
            TrainingRun,
            run_id,
            RunStatus.CANCELLED,
            where=Q(status=RunStatus.RUNNING),
            log=Concat(F("log"), Value(log_line("cancelled; nothing registered"))),
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
    run = TrainingRun.objects.select_related("project").get(pk=run_id)
    project = run.project
    config = train_config(run.params, project=project)
    log = lambda message: run_log(run_id, message)  # noqa: E731
    data = labelled_data(project, gold_set=False)
    if "human" not in config.stages:
        # Silver pairs alone: no expert label is read, not even to validate
        # on, so the version shows what they teach (a learning curve's 0).
        data = dataclasses.replace(data, labels={})
    checker = project_checker(project, data.documents)
    unsafe = sum(lab.label == "unsafe" for lab in data.labels.values())
    log(
        f"{len(data.labels)} expert labels ({unsafe} unsafe) outside the gold set, "
        f"{len(data.claims)} claims on {len(data.documents)} documents"
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
        data.claims,
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
        fitted = calibration_from_findings(
            measured[1], gold_data, kind=project.kind, log=log
        )
    _check_still_wanted(run_id)
    final = scorers_dir(project) / f"run-{run_id}"
    shutil.rmtree(final, ignore_errors=True)
    tmp.replace(final)
    version_register(
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

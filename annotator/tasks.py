"""Celery tasks: ids in, re-fetch, call one service. Each is safe to run twice
(the services compute only what is missing), which is what makes ``acks_late``
safe: a task lost with its worker is redelivered and finishes the job."""

from __future__ import annotations

import logging

from celery import shared_task
from celery.exceptions import WorkerLostError
from celery.signals import task_failure, worker_ready
from django.conf import settings
from django.db import InterfaceError, OperationalError

from annotator.claims import checking
from annotator.core import errors
from annotator.core.dispatch import send_after_commit
from annotator.models import Project, RunStatus, llm_run_models
from annotator.projects import webhooks
from annotator.runs import grading, recovery
from annotator.training import execute, schedule
from annotator.training import runs as training_runs

logger = logging.getLogger(__name__)


#: The options of every LLM run's task (extraction, grading, a kind's own):
#: retried with backoff on transient failures (429, 5xx, timeouts), every
#: other failure recorded on the run (``llm_run``). A kind's task is named
#: ``run_<something>`` in its ``tasks`` module, which routes it to the llm
#: queue (``core.celery``).
LLM_RUN_TASK = dict(
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(errors.TransientError,),
    retry_backoff=10,
    retry_backoff_max=600,
    max_retries=settings.LLM_RUN_TASK_RETRIES,
)


def llm_run(task, run_id: int, *, execute, fail) -> dict:
    """Run ``execute(run_id=)`` for an LLM run's task, failing the run with
    ``fail(run_id=, error=)`` where a retry will not help."""
    try:
        run = execute(run_id=run_id)
    except errors.ConfigurationError:
        return {"run": run_id, "status": RunStatus.FAILED}  # recorded on the run
    except (OperationalError, InterfaceError) as e:
        # The database went away (restart, failover): every finished document
        # or batch is committed, so retry like any transient failure.
        raise errors.TransientError(f"database unavailable: {e}") from e
    except errors.TransientError as e:
        if task.request.retries >= task.max_retries:
            fail(
                run_id=run_id,
                error=f"gave up after {task.request.retries} retries: {e}",
            )
            return {"run": run_id, "status": RunStatus.FAILED}
        raise
    except Exception as e:
        # A bug or an unexpected failure: record it where users look, then let
        # Celery log the traceback.
        fail(run_id=run_id, error=f"{type(e).__name__}: {e}")
        raise
    return {"run": run_id, "status": run.status, "done": run.progress_done}


# A database outage mid-check loses nothing (each batch commits on its own):
# the task comes back for the rest.
@shared_task(
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=5,
    max_retries=8,
)
def check_claims(project_id: int, force: bool = False) -> dict:
    def progress(done: int, total: int) -> None:
        # Progress of a check is visible in the data (claims still
        # unchecked); the log line is for whoever watches the worker.
        logger.info("project %s: checked %s/%s", project_id, done, total)

    if not Project.objects.filter(pk=project_id).exists():
        return {"project": project_id, "checked": 0}  # deleted meanwhile
    summary = checking.claims_check(
        project_id=project_id, force=force, progress=progress
    )
    for error in summary.errors:
        logger.warning("project %s: %s", project_id, error)
    webhooks.check_ended_notify(project_id, summary)
    if summary.checked and not summary.scorer:
        # Checked with no scorer: its first one is trained without labels.
        project = Project.objects.filter(pk=project_id).first()
        if project is not None:
            schedule.first_scorer_due(project)
    return {
        "project": project_id,
        "checked": summary.checked,
        "safe": summary.safe,
        "unsafe": summary.unsafe,
        "scorer": summary.scorer,
    }


@shared_task
def sweep_unchecked() -> list[int]:
    """Periodic (beat), and once when a worker starts: send checks again whose
    message was lost (broker down at commit) or whose worker died mid-check.
    Harmless when one is already queued: checks split the rows. Sent as a new
    check is, so a large project's rest still spreads over the workers."""
    projects = recovery.projects_with_unchecked()
    for project_id in projects:
        checking.check_enqueue(project_id)
    return projects


@worker_ready.connect
def _sweep_on_start(sender=None, **kwargs):
    """A worker back after a crash picks up the checks its death left."""
    sweep_unchecked.delay()


@shared_task
def sweep_llm_runs() -> dict:
    """Periodic (beat): send LLM runs (extraction, grading, a kind's own) again
    whose message or worker was lost, failing those lost too often, and webhook
    deliveries whose message was lost."""
    swept = {}
    for model in llm_run_models():
        resend, failed = recovery.llm_runs_lost(model)
        for run_id in resend:
            send_after_commit(model.TASK, run_id)
        swept[model.__name__] = {"resent": resend, "failed": failed}
    lost = webhooks.deliveries_lost()
    for delivery_id in lost:
        deliver_webhook.delay(delivery_id)
    swept["WebhookDelivery"] = {"resent": lost}
    return swept


# --- LLM grading (issue 5) ----------------------------------------------------


@shared_task(**LLM_RUN_TASK)
def run_grading(self, run_id: int) -> dict:
    return llm_run(
        self,
        run_id,
        execute=grading.grading_run_execute,
        fail=grading.grading_run_fail,
    )


# Not acks_late: a training run cannot resume, so a redelivery after a crash
# could only find its run claimed and do nothing. Instead a pool child that
# dies is reported by the worker's main process (task_failure with
# WorkerLostError, below), and a whole worker killed is noticed by the
# heartbeat sweep in retrain_due. A second delivery (or a second call) finds
# the run no longer pending and returns.
@shared_task
def train_scorer(run_id: int) -> dict:
    run = execute.training_run_execute(run_id=run_id)
    return {"run": run_id, "status": run.status if run else None}


@task_failure.connect
def _training_worker_lost(sender=None, exception=None, args=None, **kwargs):
    """The pool child running a training died (OOM killer, segfault): the
    worker's main process says so, and the run is failed at once."""
    if getattr(sender, "name", None) != train_scorer.name:
        return
    if isinstance(exception, WorkerLostError) and args:
        training_runs.training_run_fail(
            run_id=int(args[0]),
            error=f"the worker process died ({exception}); the active scorer is "
            "unchanged",
        )


@shared_task
def retrain_due() -> dict:
    """Periodic (beat): fail runs whose worker went silent, then start a run
    for each project with enough new expert labels."""
    failed = training_runs.training_runs_sweep_stale()
    started = schedule.retrain_due()
    return {"failed": failed, "started": started}


# --- webhooks (issue 15) ------------------------------------------------------


# The delivery row's attempts decide when calls stop (WEBHOOK_MAX_ATTEMPTS),
# so a retry the service asks for is always allowed; max_retries bounds only
# the retries of a database outage. acks_late: a call lost with its worker is
# made again, and the receiver tells the duplicate by its delivery id. The
# call ends at WEBHOOK_TIMEOUT_SECONDS; the time limits are the backstop for
# what that deadline cannot cut (a name lookup that hangs), the hard one
# killing the worker process, which ends the delivery's advisory lock with it.
@shared_task(
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=5,
    max_retries=20,
    soft_time_limit=settings.WEBHOOK_TIMEOUT_SECONDS + 30,
    time_limit=settings.WEBHOOK_TIMEOUT_SECONDS + 60,
)
def deliver_webhook(self, delivery_id: int) -> dict:
    retry_in = webhooks.webhook_deliver(delivery_id=delivery_id)
    if retry_in is not None:
        raise self.retry(countdown=retry_in, max_retries=self.request.retries + 1)
    return {"delivery": delivery_id}

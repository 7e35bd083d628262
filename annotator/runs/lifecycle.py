"""The one lifecycle every run shares (extraction, grading, sampling, training,
a kind's own).

pending -> running -> succeeded | failed | cancelled. Each transition is one
conditional UPDATE on the run's status, so that two deliveries of a task, a
sweep and a cancel can race and exactly one of them moves the run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import transaction
from django.db.models import Case, F, Q, TextField, Value, When
from django.db.models.functions import Coalesce, Concat
from django.utils import timezone

from annotator.core.dispatch import send_after_commit
from annotator.core.errors import ApplicationError
from annotator.core.locks import advisory_lock
from annotator.models import (
    ACTIVE_RUN_STATUSES,
    FINISHED_RUN_STATUSES,
    Project,
    RunStatus,
)
from annotator.projects.webhooks import run_ended_notify


def run_create_alone(
    model,
    /,
    *,
    project: Project,
    noun: str | Callable[..., str],
    send: bool = True,
    **fields,
):
    """Create a run of ``model`` on ``project`` with ``fields`` and send its
    task (``model.TASK``) with its id once the transaction commits (unless
    not ``send``: the caller runs it); refused while the project has a run of
    ``model`` pending or running.

    ``model`` is positional only: a run's ``fields`` may have a ``model``
    (the LLM's). ``noun`` names the active run in the refusal: a string, or
    a function of that run (``lambda run: run.job``).

    Raises:
        ApplicationError: naming the active run.
    """
    with transaction.atomic():
        # Serialises concurrent starts on the project: one run at a time.
        Project.objects.select_for_update().filter(pk=project.pk).first()
        active = model.objects.filter(
            project=project, status__in=ACTIVE_RUN_STATUSES
        ).first()
        if active is not None:
            name = noun(active) if callable(noun) else noun
            raise ApplicationError(
                f"{name} run {active.pk} is already {active.status} on project "
                f"{project.name!r}; wait for it or cancel it"
            )
        run = model.objects.create(project=project, **fields)
        if send:
            send_after_commit(model.TASK, run.pk)
    return run


def run_claim(model, run_id: int, *, resume: bool = True, **fields) -> bool:
    """Move the run to running, with a heartbeat; False when it cannot be.

    ``resume`` claims a running run again too (a retry, or a worker taking
    over from a lost one: runs whose work is recorded item by item); without
    it only a pending run is claimed (training, which cannot resume).
    ``fields`` are set in the same UPDATE.
    """
    now = timezone.now()
    statuses = ACTIVE_RUN_STATUSES if resume else (RunStatus.PENDING,)
    return bool(
        model.objects.filter(pk=run_id, status__in=statuses).update(
            status=RunStatus.RUNNING,
            started_at=Coalesce(F("started_at"), Value(now)),
            heartbeat_at=now,
            **fields,
        )
    )


def run_end(
    model, run_id: int, status: str, *, note: str = "", where: Q | None = None, **fields
) -> bool:
    """Finish a run still pending or running with ``status``; False when it had
    already ended (or ``where`` no longer holds).

    ``note`` (why it failed or stopped) goes first in the run's error text,
    above what the run recorded while it ran; ``fields`` are set in the same
    UPDATE.
    """
    if note:
        text = TextField()
        fields["error"] = Concat(
            Value(note, output_field=text),
            Case(
                When(error="", then=Value("", output_field=text)),
                default=Concat(Value("\n", output_field=text), F("error")),
                output_field=text,
            ),
            output_field=text,
        )
    runs = model.objects.filter(pk=run_id, status__in=ACTIVE_RUN_STATUSES)
    if where is not None:
        runs = runs.filter(where)
    ended = bool(runs.update(status=status, finished_at=timezone.now(), **fields))
    if ended:
        run_ended(model, run_id)
    return ended


def run_ended(model, run_id: int) -> None:
    """What follows the end of every run, once: its project's webhooks are
    called when the transaction commits. run_end does it; a service that ends
    a run with its own UPDATE (under a row lock) calls it after that."""
    run_ended_notify(model, run_id)


def run_execute_alone(model, /, run_id: int, *, lock_class: int, execute) -> Any:
    """Claim a resumable run and ``execute(run)`` it unless it has ended or
    another worker holds it. Returns the run as it is then.

    Safe to call twice or after a crash: the advisory lock, not the status,
    says that nobody else is on it, so a running run is claimed again after
    a retry or a lost worker.
    """
    run = model.objects.select_related("project").get(pk=run_id)
    if run.status in FINISHED_RUN_STATUSES:
        return run
    with advisory_lock(lock_class, run_id) as held:
        if not held:
            return run  # another worker is executing it
        if run_claim(model, run_id):
            execute(run)
    run.refresh_from_db()
    return run


def run_cancel(run, *, lock_class: int, noun: str):
    """Ask a budgeted LLM run (grading, sampling) to stop before its next
    batch; one no worker holds (pending, or between retries: its task will
    find it cancelled) stops now. Returns the run as it is then.

    Raises:
        ApplicationError: the run has already ended.
    """
    if run.status in FINISHED_RUN_STATUSES:
        raise ApplicationError(f"{noun} run {run.pk} already {run.status}")
    model = type(run)
    model.objects.filter(pk=run.pk).update(cancel_requested=True)
    with advisory_lock(lock_class, run.pk) as free:
        if free:
            run_end(model, run.pk, RunStatus.CANCELLED)
    run.refresh_from_db()
    return run

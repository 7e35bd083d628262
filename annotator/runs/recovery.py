"""Work whose message or worker was lost, found from the rows.

A task message only wakes a worker (see ``dispatch``): the rows say what is
left. A message dropped while the broker was down, or a worker killed in the
middle of a task, leaves unchecked claims or active runs behind; the beat
sweeps in ``tasks`` ask these functions what to send again, and each task
resumes where its rows say.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db.models import F, Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotator.models import ACTIVE_RUN_STATUSES, Claim, LLMRun, RunStatus
from annotator.runs.lifecycle import run_end


def projects_with_unchecked() -> list[int]:
    """Projects with claims waiting for a check (or a recheck)."""
    return list(
        Claim.objects.filter(checked_at=None)
        .order_by("project_id")
        .values_list("project_id", flat=True)
        .distinct()
    )


def llm_runs_lost(model: type[LLMRun]) -> tuple[list[int], list[int]]:
    """Runs of ``model`` still pending, or running with no heartbeat, for
    LLM_RUN_STALE_SECONDS: returns (ids to send again, ids failed).

    A run lost LLM_RUN_MAX_RESUMES times is failed with the reason rather than
    handed to worker after worker (a document that kills its worker would).
    """
    now = timezone.now()
    lost = model.objects.annotate(
        last_sign=Coalesce("heartbeat_at", "started_at", "created_at")
    ).filter(
        status__in=ACTIVE_RUN_STATUSES,
        last_sign__lt=now - timedelta(seconds=settings.LLM_RUN_STALE_SECONDS),
    )
    resend, failed = [], []
    for run in lost.only("pk", "resumes", "progress_done", "progress_total"):
        # The stale filter again in each UPDATE: a heartbeat that arrived
        # since the read above keeps the run with its worker.
        if run.resumes < settings.LLM_RUN_MAX_RESUMES:
            if lost.filter(pk=run.pk).update(
                resumes=F("resumes") + 1, heartbeat_at=now
            ):
                resend.append(run.pk)
            continue
        reason = (
            f"its worker was lost {run.resumes + 1} times (killed, out of memory "
            f"or its message dropped), {run.progress_done} of "
            f"{run.progress_total} done; start a new run for the rest"
        )
        if run_end(
            model,
            run.pk,
            RunStatus.FAILED,
            note=reason,
            where=Q(pk__in=lost.values("pk")),
        ):
            failed.append(run.pk)
    return resend, failed

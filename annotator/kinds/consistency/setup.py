"""A consistency project's set-up page: its answers, and beside them the
state of other models' samples with the action that asks for more."""

from __future__ import annotations

from typing import Any

from annotator.core.errors import ApplicationError
from annotator.kinds import SetupPage
from annotator.kinds.consistency import consistency_runs
from annotator.kinds.consistency.models import ConsistencyRun
from annotator.kinds.consistency.sampling import NO_SAMPLES, unsampled
from annotator.models import Document


def setup_context(project, user) -> dict[str, Any]:
    answers = Document.objects.filter(project=project)
    sampled = answers.exclude(NO_SAMPLES).count()
    waiting = unsampled(project).count()
    total = answers.count()
    return {
        "answers": total,
        "sampled": sampled,
        "unsampled": waiting,
        "no_prompt": total - sampled - waiting,
        "models": project.llm_models if project.llm_base_url else [],
        "run": ConsistencyRun.objects.filter(
            project=project, job=ConsistencyRun.Job.SAMPLES
        )
        .order_by("-created_at")
        .first(),
    }


def _sample(request, project) -> dict[str, Any]:
    try:
        run = consistency_runs.consistency_run_start(
            project=project,
            job=ConsistencyRun.Job.SAMPLES,
            budget=request.POST.get("budget", ""),
            params={"samplers": request.POST.getlist("samplers")},
            created_by=request.user,
        )
    except ApplicationError as e:
        return {"sample_problem": str(e)}
    return {"sample_started": run}


SETUP = SetupPage(
    template="setup/consistency.html",
    context=setup_context,
    actions={"sample": _sample},
)

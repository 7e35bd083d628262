"""A citation project's set-up page: its briefs, and the case law shared by
every citation project, with what it holds and where it is complete."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied

from annotator.kinds import SetupPage
from annotator.kinds.citations import caselaw
from annotator.kinds.citations.models import CaseCitation, CaseOpinion
from annotator.views import uploads
from pipeline.checkers.citations.reporters import Coverage
from pipeline.errors import InputError

#: Loading case law changes every citation project's checks.
LOAD_PERMISSION = "annotator.add_caseopinion"


def _complete(spec: str) -> str:
    """The deployment's complete reporters in words: ``U.S.:329-579`` as
    "U.S. volumes 329 to 579"."""
    try:
        volumes = Coverage.parse(spec).volumes
    except InputError as e:
        return f"not readable ({e})"
    return "; ".join(
        f"{reporter} volumes {first} to {last}"
        if last > first
        else f"{reporter} volume {first}"
        for reporter, first, last in volumes
    )


def setup_context(project, user) -> dict[str, Any]:
    return {
        "opinions": CaseOpinion.objects.count(),
        "index": CaseCitation.objects.filter(opinion=None).count(),
        "complete": _complete(settings.CITATION_COMPLETE_REPORTERS),
        "courtlistener": bool(settings.COURTLISTENER_API_TOKEN),
        "may_load": user.has_perm(LOAD_PERMISSION),
    }


def _load(importer, what: str):
    def action(request, project) -> dict[str, Any]:
        if not request.user.has_perm(LOAD_PERMISSION):
            raise PermissionDenied(
                "loading case law needs the deployment's add_caseopinion permission"
            )
        upload = request.FILES.get("file")
        problem = uploads.upload_problem([upload] if upload else [])
        if problem:
            return {"upload_problem": problem}
        report = importer(stream=uploads.opened(upload), name=upload.name)
        return uploads.reported(report, what)

    return action


SETUP = SetupPage(
    template="setup/citations.html",
    context=setup_context,
    actions={
        "caselaw": _load(caselaw.opinions_import, "Case law"),
        "caselaw_index": _load(caselaw.index_import, "Citation index"),
    },
)


def training_blocked(project) -> str | None:
    """A proposition scorer learns from the cited opinions' passages."""
    if CaseOpinion.objects.exists():
        return None
    return (
        "no case law loaded (a scorer learns from the passages of the opinions "
        "cited, and there are none to read)"
    )

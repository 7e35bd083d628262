"""The adjudication page: a project's reviewers see every item its experts
disagreed on, with each expert's label, note and time, and decide it. A plain
form per item (no script): a decision is rare next to labelling."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from annotator.core.errors import ApplicationError
from annotator.labeling import adjudication
from annotator.models import Claim
from annotator.views.access import project_page


@require_http_methods(["GET", "POST"])
@login_required
def adjudication_page(request, pk: int):
    project = project_page(request, pk, adjudication.REVIEW, action="adjudicating")
    error, status = "", 200
    if request.method == "POST":
        raw = request.POST.get("claim", "")
        claim = (
            Claim.objects.filter(project=project, pk=int(raw)).first()
            if raw.isascii() and raw.isdigit() and len(raw) < 19
            else None
        )
        try:
            if claim is None:
                raise ApplicationError("no such claim in this project")
            adjudication.adjudicate(
                claim=claim,
                reviewer=request.user,
                label=request.POST.get("label", ""),
                note=request.POST.get("note", ""),
            )
        except ApplicationError as e:
            error, status = str(e), 400
        else:
            return redirect(f"{request.path}?decided={claim.pk}")
    return render(
        request,
        "adjudicate.html",
        {
            "project": project,
            "items": adjudication.adjudication_items(project, reviewer=request.user),
            "agreement": adjudication.agreement_breakdown(project),
            "decided": request.GET.get("decided", ""),
            "error": error,
        },
        status=status,
    )

"""Server-rendered pages. The labeling UI (issue #4) will live here too."""

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Count, Q
from django.http import Http404
from django.shortcuts import render

from . import selectors
from .models import Project, Verdict


@login_required
def home(request):
    projects = selectors.projects_for(request.user).annotate(
        n_predictions=Count("predictions"),
        n_unsafe=Count("predictions", filter=Q(predictions__verdict=Verdict.UNSAFE)),
    )
    return render(request, "home.html", {"projects": projects})


@login_required
def predictions_page(request, pk: int):
    try:
        project = selectors.project_get(user=request.user, pk=pk)
    except Project.DoesNotExist:
        raise Http404("no such project") from None
    verdict = request.GET.get("verdict") or None
    if verdict not in (None, "safe", "unsafe", "unchecked"):
        verdict = None
    predictions = selectors.predictions_filter(
        project.predictions.select_related("document"), verdict=verdict
    ).order_by("document__external_id", "pk")
    page = Paginator(predictions, 100).get_page(request.GET.get("page"))
    counts = project.predictions.aggregate(
        safe=Count("pk", filter=Q(verdict=Verdict.SAFE)),
        unsafe=Count("pk", filter=Q(verdict=Verdict.UNSAFE)),
        unchecked=Count("pk", filter=Q(verdict=Verdict.UNCHECKED)),
    )
    return render(
        request,
        "predictions.html",
        {"project": project, "page": page, "counts": counts, "verdict": verdict},
    )

"""Server-rendered pages. The labeling page is the one interactive island: its
shell and first batch are rendered here, everything after goes through the API."""

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Count, Q
from django.middleware.csrf import get_token
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.safestring import mark_safe

from annotator.claims import records, selectors
from annotator.core import accounts
from annotator.dashboard import stats
from annotator.kinds import kind_hook
from annotator.labeling import adjudication, guidelines, handout, labels, queue
from annotator.models import Verdict
from annotator.projects import access
from annotator.views.access import project_page
from pipeline.checkers import checker_class


@login_required
def home(request):
    projects = list(
        access.projects_for(request.user).annotate(
            n_claims=Count("claims"),
            n_unsafe=Count("claims", filter=Q(claims__verdict=Verdict.UNSAFE)),
        )
    )
    roles = access.project_roles(request.user)
    for project in projects:
        role = roles.get(project.pk)
        project.can_label = role in access.LABEL
        project.can_review = role in adjudication.REVIEW
        project.can_manage = role in access.MANAGE
        project.machine = access.machine_scores_shown(project, role)
    return render(request, "home.html", {"projects": projects})


@login_required
def claims_page(request, pk: int):
    project = project_page(request, pk)
    role = access.project_role(request.user, project)
    # Experts on a project that hides machine scores see neither scores nor
    # verdicts, here as on the labeling screen.
    machine = access.machine_scores_visible(request.user, project)
    verdict = (request.GET.get("verdict") or None) if machine else None
    if verdict not in selectors.VERDICT_FILTERS:
        verdict = None
    claims = selectors.claims_filter(
        project.claims.select_related("document", "project"), verdict=verdict
    ).order_by("document__external_id", "pk")
    page = Paginator(claims, 100).get_page(request.GET.get("page"))
    statement = records.claim_statement(project)
    for claim in page:
        claim.statement = statement(claim.hypothesis, claim.data)
    counts = project.claims.aggregate(
        safe=Count("pk", filter=Q(verdict=Verdict.SAFE)),
        unsafe=Count("pk", filter=Q(verdict=Verdict.UNSAFE)),
        unscored=Count("pk", filter=Q(verdict=Verdict.UNSCORED)),
        unchecked=Count("pk", filter=Q(verdict=Verdict.UNCHECKED)),
    )
    return render(
        request,
        "claims.html",
        {
            "project": project,
            "page": page,
            "counts": counts,
            "verdict": verdict,
            "machine": machine,
            "can_label": role in access.LABEL,
            "can_manage": role in access.MANAGE,
        },
    )


@login_required
def label_page(request, pk: int):
    project = project_page(request, pk, access.LABEL)
    # The first batch comes with the page, so the first item needs no round trip.
    ids = labels.labeling_next(
        project=project, annotator=request.user, count=settings.LABEL_BATCH_SIZE
    )
    page = kind_hook(project.kind).labeling_page
    spec = checker_class(project.kind).claim_data
    prefix = f"/api/projects/{project.pk}/"
    data = {
        "project": {
            "id": project.pk,
            "name": project.name,
            "kind": project.kind,
            "show_machine_scores": project.show_machine_scores,
            # The keys of the claim's data a correction's value and type
            # (where the kind has groups) go under.
            "correction_keys": {
                "value": spec.corrects[0],
                "type": spec.group if spec.group in spec.corrects else None,
            },
            **(page(project) if page else {}),
        },
        "user": {"id": request.user.pk, "name": request.user.get_username()},
        "items": handout.labeling_items(
            project=project, annotator=request.user, ids=ids
        ),
        "progress": queue.queue_progress(
            project=project, annotator=request.user, now=timezone.now()
        ),
        # Rendered here, by the sanitising renderer: the page inserts this
        # HTML only, never HTML made from an item.
        "guideline": guidelines.guideline_page_data(project),
        "batch_size": settings.LABEL_BATCH_SIZE,
        "lease_seconds": settings.LABEL_LEASE_SECONDS,
        "csrf_token": get_token(request),
        "urls": {
            "next": reverse("queue-next", args=[project.pk]),
            "labels": reverse("labels", args=[project.pk]),
            "mine": reverse("labels-mine", args=[project.pk]),
            "progress": reverse("progress", args=[project.pk]),
            "item": prefix + "items/",
            "undo": prefix + "labels/",
            "document": "/api/documents/",
        },
    }
    # The claim and evidence of the project's kind (a registered checker, so
    # the name is one of ours).
    context = {
        "project": project,
        "data": data,
        "claim_partial": f"claims/{project.kind}.html",
    }
    return render(request, "label.html", context)


@login_required
def dashboard_page(request, pk: int):
    # Project admins only, like the scorer and training endpoints it drives;
    # an expert gets a 403 (they may know the project exists, not its metrics).
    project = project_page(request, pk, access.MANAGE)
    board = stats.dashboard(project)
    # Safe to inline: annotator.dashboard.charts escapes every piece of text it is given
    # (model names, usernames and versions come from users and imports).
    charts = {name: mark_safe(svg) for name, svg in board.pop("charts").items()}
    live = board["runs"]["live_training"]
    grading = board["runs"]["live_grading"]
    active = board["active"]
    data = {
        "project": {"id": project.pk, "name": project.name},
        "csrf_token": get_token(request),
        "live_training": live.pk if live else None,
        "live_grading": grading.pk if grading else None,
        "urls": {
            "activate": "/api/scorer-models/{id}/activate/",
            "calibrate": "/api/scorer-models/{id}/calibrate/",
            "operating_point": "/api/scorer-models/{id}/operating-point/",
            "training_runs": "/api/training-runs/",
            "training_run": "/api/training-runs/{id}/",
            "cancel": "/api/training-runs/{id}/cancel/",
            "grading_estimate": "/api/grading-runs/estimate/",
            "grading_runs": "/api/grading-runs/",
            "grading_run": "/api/grading-runs/{id}/",
            "grading_cancel": "/api/grading-runs/{id}/cancel/",
        },
    }
    return render(
        request,
        "dashboard.html",
        {
            "project": project,
            "charts": charts,
            "data": data,
            "download_url": (
                f"/api/scorer-models/{active.pk}/download/" if active else None
            ),
            # Grading is offered where the kind has a prompt for it.
            "graded": checker_class(project.kind).grader_prompt is not None,
            "kind_panels": _kind_panels(project),
            **board,
        },
    )


def _kind_panels(project) -> dict | None:
    """The dashboard panels the project's kind brings (its hook), if any."""
    panels = kind_hook(project.kind).dashboard
    if panels is None:
        return None
    return {
        "template": panels.template,
        "context": panels.context(project),
        "script": panels.script,
    }


class LoginView(auth_views.LoginView):
    """Django's login page with the failed-login brake of the token endpoint."""

    template_name = "login.html"

    def post(self, request, *args, **kwargs):
        wait = accounts.login_blocked(
            request=request, username=request.POST.get("username", "")
        )
        if wait:
            # Unbound: validating the form would try the password.
            form = self.get_form_class()(request)
            response = self.render_to_response(
                self.get_context_data(form=form, throttled=wait)
            )
            response.status_code = 429
            response["Retry-After"] = str(wait)
            return response
        return super().post(request, *args, **kwargs)

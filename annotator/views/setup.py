"""The project set-up pages: create a project, then upload its documents and
claims (each import reported line by line), add its annotators and
watch its checks. Only users who may create projects, and a project's
admins, see them."""

from __future__ import annotations

from functools import wraps

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_GET, require_http_methods

from annotator.claims import ingest
from annotator.dashboard import stats
from annotator.kinds import kind_hook
from annotator.models import Project, Role
from annotator.projects import access, services
from annotator.training import runs as training_runs
from annotator.views import uploads
from annotator.views.access import project_page


class ProjectForm(forms.ModelForm):
    class Meta:
        model = Project
        fields = ["name", "description", "kind"]

    def clean_name(self):
        return services.project_name_validate(self.cleaned_data["name"])


class MemberForm(forms.Form):
    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(choices=Role.choices, initial=Role.EXPERT)

    def clean_username(self):
        username = self.cleaned_data["username"].strip()
        User = get_user_model()
        try:
            self.user = User._default_manager.get_by_natural_key(username)
        except User.DoesNotExist:
            raise forms.ValidationError(
                f"no user is named {username!r}; open an account for them below"
            ) from None
        return username


class AccountForm(forms.Form):
    username = forms.CharField(
        max_length=150, validators=[get_user_model().username_validator]
    )
    role = forms.ChoiceField(choices=Role.choices, initial=Role.EXPERT)

    def clean_username(self):
        username = self.cleaned_data["username"].strip()
        User = get_user_model()
        # Case-insensitively, as Django's own sign-up form: "Ann" beside "ann"
        # is a typo waiting to log in as someone else.
        if User._default_manager.filter(username__iexact=username).exists():
            raise forms.ValidationError(
                f"a user named {username!r} exists already; add them above"
            )
        return username


def _managed_project(request, pk: int) -> Project:
    return project_page(request, pk, access.MANAGE, action="setting up a project")


def _upload_limited(view):
    """Refuses a body over MAX_UPLOAD_BYTES by its Content-Length, before the
    CSRF check reads the multipart body (and spools its files to disk); the
    CSRF check then runs as usual (Django's pattern for upload handlers)."""
    protected = csrf_protect(view)

    @csrf_exempt
    @wraps(view)
    def wrapper(request, *args, **kwargs):
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return HttpResponse("Content-Length is not a number", status=400)
        if length > settings.MAX_UPLOAD_BYTES:
            return HttpResponse(
                f"{length} bytes sent, over the limit of {settings.MAX_UPLOAD_BYTES} "
                "bytes (MAX_UPLOAD_BYTES); split the upload",
                status=413,
                content_type="text/plain; charset=utf-8",
            )
        return protected(request, *args, **kwargs)

    return wrapper


@require_http_methods(["GET", "POST"])
@login_required
def project_new(request):
    if not services.may_create_projects(request.user):
        raise PermissionDenied("creating projects needs the add_project permission")
    form = ProjectForm(request.POST or None)
    if form.is_bound and form.is_valid():
        project = services.project_create(creator=request.user, **form.cleaned_data)
        return redirect("project-setup", pk=project.pk)
    return render(
        request, "project_new.html", {"form": form}, status=400 if form.errors else 200
    )


def _documents(request, project: Project) -> dict:
    files = request.FILES.getlist("files")
    problem = uploads.upload_problem(files)
    if problem:
        return {"upload_problem": problem, "upload_what": "documents"}
    report = ingest.documents_import(
        project=project, files=[(f.name, uploads.opened(f)) for f in files]
    )
    what = "Items" if ingest.takes_items(project) else "Documents"
    return uploads.reported(report, what)


def _claims(request, project: Project) -> dict:
    upload = request.FILES.get("file")
    problem = uploads.upload_problem([upload] if upload else [])
    if problem:
        return {"upload_problem": problem, "upload_what": "claims"}
    report = ingest.claims_import(
        project=project, stream=uploads.opened(upload), source=upload.name
    )
    return uploads.reported(report, "Claims")


def _member(request, project: Project) -> dict:
    form = MemberForm(request.POST)
    if not form.is_valid():
        return {"member_form": form}
    membership = services.membership_set(
        project=project, user=form.user, role=form.cleaned_data["role"]
    )
    return {"member_added": membership}


def _account(request, project: Project) -> dict:
    if not services.may_open_accounts(request.user):
        raise PermissionDenied("opening accounts needs the add_user permission")
    form = AccountForm(request.POST)
    if not form.is_valid():
        return {"account_form": form}
    user, password = services.member_account_create(
        project=project,
        username=form.cleaned_data["username"],
        role=form.cleaned_data["role"],
    )
    return {"account": {"user": user, "password": password}}


_ACTIONS = {
    "documents": _documents,
    "claims": _claims,
    "member": _member,
    "account": _account,
}


def _refused(result: dict) -> bool:
    report = result.get("report")
    if report is not None:
        return report.outcome is ingest.Outcome.REFUSED
    return any(key.endswith("_problem") for key in result) or any(
        form.errors for key, form in result.items() if key.endswith("_form")
    )


# The response carries a password once; no cache, proxy or back button keeps it.
@_upload_limited
@never_cache
@require_http_methods(["GET", "POST"])
@login_required
def project_setup(request, pk: int):
    project = _managed_project(request, pk)
    setup = kind_hook(project.kind).setup
    result: dict = {}
    if request.method == "POST":
        action = {**setup.actions, **_ACTIONS}.get(request.POST.get("action", ""))
        if action is None:
            return HttpResponse("unknown action", status=400)
        result = action(request, project)
    context = {
        "project": project,
        **_progress(project),
        "training_blocked": training_runs.training_blocked(project),
        "members": project.memberships.select_related("user").order_by(
            "user__username"
        ),
        "roles": Role.choices,
        "may_open_accounts": services.may_open_accounts(request.user),
        "member_form": MemberForm(),
        "account_form": AccountForm(),
        "upload_bytes": settings.MAX_UPLOAD_BYTES,
        "pdf_max_pages": settings.PDF_MAX_PAGES,
        "kind_setup": {
            "template": setup.template,
            **(setup.context(project, request.user) if setup.context else {}),
        },
        **result,
    }
    return render(
        request, "project_setup.html", context, status=400 if _refused(result) else 200
    )


@never_cache
@require_GET
@login_required
def project_setup_progress(request, pk: int):
    """The check-progress part of the set-up page, which its script polls."""
    project = _managed_project(request, pk)
    return render(
        request,
        "project_setup_progress.html",
        {"project": project, **_progress(project)},
    )


def _progress(project: Project) -> dict:
    """The check-progress part's context: counts and pipeline stages."""
    progress = stats.overview(project)
    return {"progress": progress, "stages": stats.stages(project, progress)}

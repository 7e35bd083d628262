"""The guideline page: a project's admins write its labeling guideline in
Markdown, preview it rendered, save it as a new version and read the older
ones. Members who are not admins read it here too."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models.functions import Length
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_http_methods

from annotator.core.errors import GuidelineInvalid
from annotator.labeling import guidelines
from annotator.projects import access
from annotator.views.access import project_page


def _version_param(raw: str | None) -> int | None:
    if not raw:
        return None
    if not raw.isascii() or not raw.isdigit() or len(raw) > 10:
        raise Http404("no such guideline version")
    return int(raw)


@require_http_methods(["GET", "POST"])
@login_required
def guideline_page(request, pk: int):
    project = project_page(request, pk)
    can_edit = access.project_role(request.user, project) in access.MANAGE
    latest = guidelines.guideline_latest(project)
    version = _version_param(request.GET.get("version"))
    shown = latest if version is None else guidelines.guideline_get(project, version)
    if version is not None and shown is None:
        raise Http404(f"the project has no guideline version {version}")
    text = shown.text if shown else ""
    error = ""
    preview = None
    status = 200
    if request.method == "POST":
        if not can_edit:
            raise PermissionDenied("editing the guideline needs the role admin")
        text = request.POST.get("text", "")
        try:
            if request.POST.get("action") == "preview":
                # The same checks as a save, so the preview never shows text
                # that could not be saved.
                preview = guidelines.guideline_preview(text)
            else:
                guideline, created = guidelines.guideline_save(
                    project=project, user=request.user, text=text
                )
                return redirect(
                    f"{request.path}?saved={guideline.version}&new={int(created)}"
                )
        except GuidelineInvalid as e:
            error = str(e)
            status = 400
    saved = request.GET.get("saved")
    context = {
        "project": project,
        "can_edit": can_edit,
        "latest": latest,
        "shown": shown,
        "text": text,
        "error": error,
        # Safe: guidelines.guideline_render is the sanitising renderer (raw
        # HTML escaped, only http/https/mailto links).
        "shown_html": mark_safe(guidelines.guideline_render(shown.text).html)
        if shown
        else "",
        "preview_html": mark_safe(preview) if preview is not None else None,
        "versions": project.guidelines.select_related("created_by")
        .annotate(chars=Length("text"))
        .defer("text")
        .order_by("-version"),
        "saved": saved if saved and saved.isdigit() else None,
        "saved_new": request.GET.get("new") == "1",
        "max_chars": guidelines.GUIDELINE_MAX_CHARS,
    }
    return render(request, "guideline.html", context, status=status)

"""What every server-rendered page of a project checks first."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404

from annotator.models import Project
from annotator.projects import access


def project_page(request, pk: int, roles=None, *, action: str = "this page") -> Project:
    """The project for one of its pages: 404 for outsiders (as the API, so
    they cannot probe which projects exist), 403 for members without one of
    ``roles`` (any member when None)."""
    try:
        project = access.project_get(user=request.user, pk=pk)
    except Project.DoesNotExist:
        raise Http404("no such project") from None
    if roles is not None and access.project_role(request.user, project) not in roles:
        raise PermissionDenied(f"{action} needs the role {' or '.join(roles)}")
    return project

"""Who may do what, per project role (annotator.projects.access.MANAGE, LABEL).

Visibility comes from the querysets (``selectors.*_for(user)``: a row of a
project you are not on is a 404); these classes decide what a member who can
see a row may do with it."""

from __future__ import annotations

from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.permissions import SAFE_METHODS, BasePermission

from annotator.models import Project
from annotator.projects import access


def project_of(obj) -> Project:
    return obj if isinstance(obj, Project) else obj.project


def require_role(user, project: Project, roles, *, action: str) -> None:
    """PermissionDenied unless ``user`` holds one of ``roles`` on ``project``."""
    require_held_role(access.project_role(user, project), project, roles, action=action)


def require_held_role(
    role: str | None, project: Project, roles, *, action: str
) -> None:
    """PermissionDenied unless ``role`` (the user's on ``project``) is one of
    ``roles``."""
    if role not in roles:
        raise PermissionDenied(
            f"{action} needs the role {' or '.join(roles)} on project {project.name!r}"
        )


def managed_project(user, pk, *, action: str) -> Project:
    """The project named in a request body, for one of its admins' actions:
    a 400 when the user cannot see it, a 403 when they may not manage it."""
    try:
        project = access.project_get(user=user, pk=int(pk))
    except (Project.DoesNotExist, TypeError, ValueError):
        raise ValidationError({"project": "no such project"}) from None
    require_role(user, project, access.MANAGE, action=action)
    return project


class ProjectAdminWrites(BasePermission):
    """Members read; a project's admins change its rows."""

    message = "changing this needs the project admin role"

    def has_permission(self, request, view) -> bool:
        return bool(request.user and request.user.is_authenticated)

    def has_object_permission(self, request, view, obj) -> bool:
        if request.method in SAFE_METHODS:
            return True
        role = access.project_role(request.user, project_of(obj))
        return role in access.MANAGE


class IsProjectAdmin(ProjectAdminWrites):
    """Reads too need the admin role (exports, checks, scorer files)."""

    message = "this needs the project admin role"

    def has_object_permission(self, request, view, obj) -> bool:
        role = access.project_role(request.user, project_of(obj))
        return role in access.MANAGE

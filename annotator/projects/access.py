"""Who may see and do what in a project. Views and the API go through these,
so "which projects may this user see" is decided in one place."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from django.db.models import F, Q, QuerySet

from annotator.models import (
    Claim,
    Document,
    Label,
    LLMRun,
    Membership,
    Project,
    Role,
    ScorerModel,
    TrainingRun,
)

M = TypeVar("M", bound=LLMRun)

#: Roles that may change a project: its settings, imports, runs, scorers.
MANAGE = (Role.ADMIN,)
#: Roles that may label a project's claims.
LABEL = (Role.ADMIN, Role.REVIEWER, Role.EXPERT)


def projects_for(user, *, roles: Iterable[str] | None = None) -> QuerySet[Project]:
    """The projects ``user`` is a member of (with one of ``roles``, if given).

    Superusers hold every role on every project; ``is_staff`` alone grants
    nothing here (only the Django admin, under its model permissions).
    """
    if not user.is_authenticated:
        return Project.objects.none()
    if user.is_superuser:
        return Project.objects.all()
    memberships = Membership.objects.filter(user=user)
    if roles is not None:
        memberships = memberships.filter(role__in=list(roles))
    return Project.objects.filter(pk__in=memberships.values("project_id"))


def project_get(*, user, pk: int) -> Project:
    """The project if ``user`` may see it; DoesNotExist otherwise (a 404, so
    outsiders cannot probe which projects exist)."""
    return projects_for(user).get(pk=pk)


def project_and_role(*, user, pk: int) -> tuple[Project, str]:
    """:func:`project_get` and ``user``'s role on it in one query: the
    labeling API asks both on every request."""
    if user.is_superuser:
        return project_get(user=user, pk=pk), Role.ADMIN
    if not user.is_authenticated:
        raise Project.DoesNotExist
    # One join on the membership (one per user and project): the filter
    # comes first so that the role is read from the row it matched.
    project = (
        Project.objects.filter(pk=pk, memberships__user=user)
        .annotate(member_role=F("memberships__role"))
        .get()
    )
    return project, project.member_role


def project_role(user, project: Project) -> str | None:
    """``user``'s role on ``project``: None for a non-member."""
    if user.is_superuser:
        return Role.ADMIN
    if not user.is_authenticated:
        return None
    return (
        Membership.objects.filter(user=user, project=project)
        .values_list("role", flat=True)
        .first()
    )


def project_roles(user) -> dict[int, str]:
    """``user``'s role on each project they can see, by project id."""
    if user.is_superuser:
        return dict.fromkeys(Project.objects.values_list("pk", flat=True), Role.ADMIN)
    return dict(Membership.objects.filter(user=user).values_list("project_id", "role"))


def machine_scores_shown(project: Project, role: str | None) -> bool:
    """Experts see scores and verdicts only where the project shows them (so
    they do not anchor the labels); its admins always do."""
    return project.show_machine_scores or role in MANAGE


def machine_scores_visible(user, project: Project) -> bool:
    """:func:`machine_scores_shown` for ``user``'s role on ``project``."""
    return machine_scores_shown(project, project_role(user, project))


def projects_with_scores_for(user) -> QuerySet[Project]:
    """The projects whose machine scores ``user`` may see."""
    return projects_for(user).filter(
        Q(show_machine_scores=True) | Q(pk__in=projects_for(user, roles=MANAGE))
    )


def documents_for(user) -> QuerySet[Document]:
    return Document.objects.filter(project__in=projects_for(user))


def claims_for(user) -> QuerySet[Claim]:
    return Claim.objects.filter(project__in=projects_for(user))


def labels_for(user) -> QuerySet[Label]:
    """A project's admins see every label on it; other members their own."""
    if not user.is_authenticated:
        return Label.objects.none()
    return Label.objects.filter(
        Q(claim__project__in=projects_for(user, roles=MANAGE))
        | Q(claim__project__in=projects_for(user), annotator=user)
    )


def scorer_models_for(user) -> QuerySet[ScorerModel]:
    return ScorerModel.objects.filter(project__in=projects_for(user, roles=MANAGE))


def training_runs_for(user) -> QuerySet[TrainingRun]:
    return TrainingRun.objects.filter(project__in=projects_for(user, roles=MANAGE))


def runs_for(user, model: type[M]) -> QuerySet[M]:
    """The LLM runs of ``model`` (any run kind, a kind's own included) in the
    projects ``user`` is a member of."""
    return model.objects.filter(project__in=projects_for(user))

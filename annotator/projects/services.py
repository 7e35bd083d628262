"""Projects and their members: creating a project and changing its
settings (a change that can turn verdicts has the claims checked again),
adding, changing and removing a member, and opening an account for an
annotator who has none yet. The API, the pages and the admin write here."""

from __future__ import annotations

import secrets
import unicodedata

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction

from annotator.claims import checking
from annotator.kinds import kind_hook
from annotator.models import Membership, Project, Role

# 16 URL-safe characters (96 bits): read out or pasted once, then changed.
_PASSWORD_BYTES = 12


def may_create_projects(user) -> bool:
    return user.has_perm("annotator.add_project")


def may_open_accounts(user) -> bool:
    # Opening an account is Django's user permission, not a project role: a
    # project admin may only add people an account holder already vouched for.
    return user.has_perm("auth.add_user")


def project_name_validate(name: str) -> str:
    """``name``, checked: a project's name is shown in pages and headers (an
    export's file name), where a control character or a line break breaks
    them.

    Raises:
        ValidationError: it holds one.
    """
    for c in name:
        if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp"):
            raise ValidationError(
                f"a project name cannot hold control characters or line breaks "
                f"(U+{ord(c):04X})"
            )
    return name


#: Settings whose change can turn a verdict already given: changing one (or
#: an option its kind says so of) has every claim of the project checked
#: again (verdicts stay until replaced).
RECHECK_FIELDS = frozenset({"nli_threshold"})


def project_create(*, creator, **fields) -> Project:
    """A new project with ``creator`` as its admin (``fields``: its name,
    description, kind and settings; ``options``, its kind's, are checked and
    the others filled with their defaults).

    Raises:
        ValidationError: an option its kind does not have or refuses.
    """
    project = Project(**fields)
    project.options = _options_cleaned(project, project.options, {})
    with transaction.atomic():
        project.save()
        Membership.objects.create(project=project, user=creator, role=Role.ADMIN)
    return project


def project_update(project: Project, **changes) -> Project:
    """Save ``changes`` to ``project`` (``options``: the options sent, put in
    the stored ones); when one of them can turn a verdict (:data:`RECHECK_FIELDS`,
    an option its kind marks ``rechecks``), the workers check every claim
    again.

    Raises:
        ValidationError: an option its kind does not have or refuses.
    """
    if "options" in changes:
        changes["options"] = _options_cleaned(
            project, changes["options"], project.options
        )
    changed = {k for k, v in changes.items() if getattr(project, k) != v}
    rechecks = bool(changed & RECHECK_FIELDS)
    if "options" in changed:
        options = kind_hook(project.kind).project_options
        rechecks |= any(
            options[name].rechecks and project.option(name) != value
            for name, value in changes["options"].items()
        )
    for name in changed:
        setattr(project, name, changes[name])
    with transaction.atomic():
        project.save()
        if rechecks:
            checking.claims_check_queue(project=project, force=True)
    return project


def _options_cleaned(project: Project, sent, stored) -> dict:
    try:
        return kind_hook(project.kind).options_cleaned(sent, stored)
    except ValueError as e:
        raise ValidationError({"options": str(e)}) from e


def membership_set(*, project: Project, user, role: str) -> Membership:
    """Make ``user`` a member of ``project`` with ``role``, or change their role."""
    membership, _ = Membership.objects.update_or_create(
        project=project, user=user, defaults={"role": role}
    )
    return membership


def membership_remove(*, project: Project, user_id: int) -> None:
    """Take a member off ``project``; their labels stay."""
    project.memberships.filter(user_id=user_id).delete()


def member_account_create(*, project: Project, username: str, role: str = Role.EXPERT):
    """A new user with a generated password, a member of ``project`` with
    ``role``. Returns the user and the password, which is stored only as a
    hash: the caller shows it once."""
    password = secrets.token_urlsafe(_PASSWORD_BYTES)
    with transaction.atomic():
        user = get_user_model().objects.create_user(username, password=password)
        membership_set(project=project, user=user, role=role)
    return user, password

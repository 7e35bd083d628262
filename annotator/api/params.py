"""Query parameters of the list endpoints: a bad value is a 400 naming the
parameter, never a database error."""

from __future__ import annotations

import re

from rest_framework.exceptions import ValidationError

_ID = re.compile(r"[0-9]{1,18}")  # fits Postgres' bigint


def project_param(params) -> int | None:
    """``?project=``: a project id, or None when absent."""
    raw = params.get("project")
    if raw in (None, ""):
        return None
    if not _ID.fullmatch(raw):
        raise ValidationError({"project": "must be a project id (a whole number)"})
    return int(raw)


def float_param(params, name: str) -> float | None:
    raw = params.get(name)
    if raw in (None, ""):
        return None
    try:
        return float(raw)
    except ValueError:
        raise ValidationError({name: "must be a number"}) from None


def bool_param(params, name: str) -> bool | None:
    raw = params.get(name)
    if raw in (None, ""):
        return None
    if raw.lower() in ("1", "true", "yes"):
        return True
    if raw.lower() in ("0", "false", "no"):
        return False
    raise ValidationError({name: "must be true or false"})

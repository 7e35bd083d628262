"""Query parameters of the list endpoints: a bad value is a 400 naming the
parameter, never a database error."""

from __future__ import annotations

import re

from rest_framework.exceptions import ValidationError

_ID = re.compile(r"[0-9]{1,18}")  # fits Postgres' bigint


def id_param(params, name: str, *, what: str = "an id") -> int | None:
    """``?<name>=``: a row id, or None when absent. (``str.isdigit`` is not the
    test: it passes "²", which ``int`` refuses.)"""
    raw = params.get(name)
    if raw in (None, ""):
        return None
    if not _ID.fullmatch(raw):
        raise ValidationError({name: f"must be {what} (a whole number)"})
    return int(raw)


def project_param(params) -> int | None:
    """``?project=``: a project id, or None when absent."""
    return id_param(params, "project", what="a project id")


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

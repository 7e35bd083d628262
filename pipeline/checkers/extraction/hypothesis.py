"""The hypothesis string h(y) = "{Entity Type}: {value}" (paper 3.3.1)."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from .schema import Schema

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def humanise_type(name: str) -> str:
    """``HearingDate`` -> ``Hearing Date``, ``hearing_date`` -> ``Hearing Date``.

    All-capital names (``GPE``) stay as they are.
    """
    words = _CAMEL_BOUNDARY.sub(" ", name.replace("_", " ").replace("-", " ")).split()
    return " ".join(w if w.isupper() else w[:1].upper() + w[1:] for w in words)


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _render_date(value: dict[str, Any]) -> str:
    parts = []
    for key, width in (("yyyy", 4), ("mm", 2), ("dd", 2)):
        part = value.get(key)
        if _blank(part):
            break
        parts.append(str(part).strip().zfill(width))
    return "-".join(parts)


def _render_name(value: dict[str, Any]) -> str:
    keys = ("title", "first_name", "middle_name", "last_name")
    return " ".join(str(value[k]).strip() for k in keys if not _blank(value.get(k)))


def _render_template(template: str, value: dict[str, Any]) -> str:
    filled = defaultdict(str, {k: "" if v is None else v for k, v in value.items()})
    return " ".join(template.format_map(filled).split())


def render_value(value: Any, *, render: str | None = None) -> str:
    """Render a structured value readably.

    Args:
        value: a string, number, ``None`` or a dict payload.
        render: ``"date"``, ``"name"``, a ``str.format`` template, or ``None``
            to guess from the payload's keys.
    """
    if value is None:
        return "none"
    if not isinstance(value, dict):
        return str(value).strip()
    if render == "date" or (render is None and "yyyy" in value):
        return _render_date(value)
    if render == "name" or (
        render is None and ("first_name" in value or "last_name" in value)
    ):
        return _render_name(value)
    if render:
        return _render_template(render, value)
    return " ".join(render_value(v) for v in value.values() if not _blank(v))


def type_display_name(type_name: str, schema: Schema | None = None) -> str:
    spec = schema.get(type_name) if schema else None
    return spec.display_name if spec and spec.display_name else humanise_type(type_name)


def render_hypothesis(
    type_name: str, value: Any, *, schema: Schema | None = None
) -> str:
    """h(y): ``"Hearing Date: 2012-01-17"``.

    Args:
        type_name: the entity type as extracted (``HearingDate``).
        value: its payload.
        schema: optional project schema overriding display names and renderers.
    """
    spec = schema.get(type_name) if schema else None
    shown = render_value(value, render=spec.render if spec else None)
    return f"{type_display_name(type_name, schema)}: {shown}"

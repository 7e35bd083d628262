"""How an extracted field reads on the labeling page: its entity type and
value by the project's schema (display names, renderers), and the types an
expert may correct it to."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from annotator.core.errors import ConfigurationError
from annotator.kinds.extraction.options import project_schema
from pipeline.checkers.extraction.hypothesis import (
    render_hypothesis,
    render_value,
    type_display_name,
)
from pipeline.types import Claim


def _schema_or_none(project):
    """The project's schema; None when it has none or it does not parse
    (pages then show default names; the check reports it)."""
    try:
        return project_schema(project)
    except ConfigurationError:
        return None


def claim_display(project) -> Callable[[Claim], dict[str, str]]:
    schema = _schema_or_none(project)

    def display(claim: Claim) -> dict[str, str]:
        spec = schema.get(claim.type) if schema else None
        return {
            "type_display": type_display_name(claim.type, schema),
            "value_display": render_value(
                claim.value, render=spec.render if spec else None
            ),
            "hypothesis": render_hypothesis(claim.type, claim.value, schema=schema),
        }

    return display


def labeling_page(project) -> dict[str, Any]:
    schema = _schema_or_none(project)
    return {"entity_types": sorted(schema.entity_types) if schema else []}

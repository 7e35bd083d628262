"""The settings an extraction project has: its entity schema, the prompt its
LLM runs add, and the alignment threshold its check keeps contexts at."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from annotator.core.errors import ConfigurationError
from annotator.kinds import ProjectOption
from pipeline.checkers.extraction.schema import Schema, schema_from_dict
from pipeline.errors import SchemaError


def _schema_cleaned(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError("must be an object (the pipeline's schema JSON)")
    if value:
        try:
            schema_from_dict(value)
        except SchemaError as e:
            raise ValueError(str(e)) from e
    return value


def _prompt_cleaned(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("must be text")
    return value


def _threshold_cleaned(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("must be a number")
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"must be between 0 and 1, got {value}")
    return float(value)


OPTIONS = {
    "entity_schema": ProjectOption(
        default=dict,
        clean=_schema_cleaned,
        help="Entity types, display names and payload fields (the pipeline's "
        "schema JSON).",
        rechecks=True,
    ),
    "extraction_prompt": ProjectOption(
        default=str,
        clean=_prompt_cleaned,
        help="Extra instructions sent to the LLM.",
    ),
    "align_threshold": ProjectOption(
        default=lambda: settings.DEFAULT_ALIGN_THRESHOLD,
        clean=_threshold_cleaned,
        help="Minimum alignment score (matches / alignment length) for a "
        "context to count as found in the document.",
        rechecks=True,
    ),
}


def project_schema(project) -> Schema | None:
    """The project's entity schema, None when it has none.

    Raises:
        ConfigurationError: the stored schema does not parse.
    """
    stored = project.option("entity_schema")
    try:
        return schema_from_dict(stored) if stored else None
    except SchemaError as e:
        raise ConfigurationError(f"project {project.name!r}: {e}") from e

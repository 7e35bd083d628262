"""Entity schemas: which types to extract, their payload fields and display.

A schema file is JSON::

    {"name": "asylex",
     "instructions": "optional extra text for the extraction prompt",
     "entity_types": {
        "HearingDate": {"description": "date of the hearing",
                        "fields": {"yyyy": "year", "mm": "month", "dd": "day"},
                        "render": "date"},
        "JudgeName": {"fields": {"first_name": "", "last_name": ""}},
        "HearingType": {"enum": ["In Person", "Virtual"]},
        "GPE": {"display_name": "GPE"}}}

``fields`` maps payload field names to descriptions (omit it for a plain
string value); ``render`` is ``"date"``, ``"name"`` or a ``str.format``
template over the fields; ``display_name`` overrides the humanised type name.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import SchemaError


@dataclass(frozen=True)
class EntityType:
    name: str
    display_name: str | None = None
    description: str = ""
    fields: dict[str, str] | None = None
    enum: tuple[str, ...] | None = None
    render: str | None = None


@dataclass(frozen=True)
class Schema:
    name: str = "default"
    entity_types: dict[str, EntityType] = field(default_factory=dict)
    instructions: str = ""

    def get(self, type_name: str) -> EntityType | None:
        return self.entity_types.get(type_name)


def schema_from_dict(data: Any) -> Schema:
    """Validate and build a :class:`Schema` from parsed JSON.

    Raises:
        SchemaError: naming the first malformed part.
    """
    if not isinstance(data, dict):
        raise SchemaError("schema must be a JSON object")
    types = data.get("entity_types")
    if not isinstance(types, dict) or not types:
        raise SchemaError("schema needs a non-empty 'entity_types' object")
    built = {}
    for name, spec in types.items():
        if not isinstance(spec, dict):
            raise SchemaError(f"entity type {name!r} must be an object")
        fields = spec.get("fields")
        if fields is not None and not (
            isinstance(fields, dict)
            and fields
            and all(isinstance(k, str) for k in fields)
        ):
            raise SchemaError(
                f"entity type {name!r}: 'fields' must be a non-empty object"
            )
        enum = spec.get("enum")
        if enum is not None and not (
            isinstance(enum, list) and enum and all(isinstance(v, str) for v in enum)
        ):
            raise SchemaError(f"entity type {name!r}: 'enum' must be a list of strings")
        if fields is not None and enum is not None:
            raise SchemaError(
                f"entity type {name!r}: give 'fields' or 'enum', not both"
            )
        built[name] = EntityType(
            name=name,
            display_name=spec.get("display_name"),
            description=str(spec.get("description", "")),
            fields={k: str(v) for k, v in fields.items()} if fields else None,
            enum=tuple(enum) if enum else None,
            render=spec.get("render"),
        )
    return Schema(
        name=str(data.get("name", "default")),
        entity_types=built,
        instructions=str(data.get("instructions", "")),
    )


def load_schema(path: str | Path) -> Schema:
    """Read a schema JSON file.

    Raises:
        SchemaError: the file is missing, not JSON or malformed.
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SchemaError(f"{path}: cannot read schema: {e}") from e
    try:
        return schema_from_dict(data)
    except SchemaError as e:
        raise SchemaError(f"{path}: {e}") from e

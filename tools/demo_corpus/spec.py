"""What the demo corpus holds: styles, kinds of claim, entity types, the
fake source LLMs' error profiles, and the schema JSON of each style."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

STYLES: tuple[str, ...] = ("irb_header", "narrative", "tabular")
"""Styles produced by default."""

HELD_OUT_STYLES: tuple[str, ...] = ("tribunal",)
"""Styles produced only when asked for, to test generalisation."""

SAFE_KINDS: tuple[str, ...] = (
    "exact",
    "case",
    "ocr_split",
    "inserted_tokens",
    "elided_tokens",
    "translation",
    "whitespace",
)
MISTRANSCRIPTION_KINDS: tuple[str, ...] = SAFE_KINDS[1:]
UNSAFE_KINDS: tuple[str, ...] = (
    "hallucinated_context",
    "bad_grounding",
    "incorrect_entity",
    "wrong_value",
)

DEFAULT_TYPES: tuple[str, ...] = (
    "HearingDate",
    "DecisionDate",
    "JudgeName",
    "GPE",
    "Organization",
    "PublicOrPrivateHearing",
    "HearingType",
)
TRIBUNAL_TYPES: tuple[str, ...] = (
    "ClaimantName",
    "HearingDate",
    "DecisionDate",
    "Tribunal",
    "City",
    "HearingFormat",
)


@dataclass(frozen=True)
class ModelProfile:
    """How often a fake source LLM errs.

    ``unsafe_rate`` is the share of its claims that are unsafe;
    ``mistranscription_rate`` the share of safe ones whose context is not
    copied verbatim; ``unsafe_weights`` weigh :data:`UNSAFE_KINDS` in order.
    """

    unsafe_rate: float
    mistranscription_rate: float
    unsafe_weights: tuple[float, float, float, float]


# Bigger models err less (paper 5.4); o4-mini is best, llama-4-scout worst with
# 42% mistranscriptions (paper 5.5). Documents go to models in turn, so the
# overall unsafe share is the mean of the rates, about 18%.
MODELS: dict[str, ModelProfile] = {
    "o4-mini": ModelProfile(0.05, 0.05, (0.10, 0.30, 0.20, 0.40)),
    "gpt-4.1": ModelProfile(0.09, 0.08, (0.15, 0.30, 0.20, 0.35)),
    "gpt-4.1-mini": ModelProfile(0.15, 0.14, (0.20, 0.25, 0.25, 0.30)),
    "gpt-4.1-nano": ModelProfile(0.24, 0.22, (0.25, 0.25, 0.25, 0.25)),
    "llama-4-scout": ModelProfile(0.36, 0.42, (0.35, 0.25, 0.20, 0.20)),
}

# The shape of each type's value: a date dict, a name dict, free text or an enum.
FAMILY = {
    "HearingDate": "date",
    "DecisionDate": "date",
    "EventDate": "date",
    "JudgeName": "name",
    "ClaimantName": "name",
    "CounselName": "name",
    "InterpreterName": "name",
    "MemberName": "name",
    "GPE": "text",
    "Organization": "text",
    "Tribunal": "text",
    "City": "text",
    "Province": "text",
    "Respondent": "text",
    "FileLabel": "text",
    "PublicOrPrivateHearing": "enum",
    "HearingType": "enum",
    "HearingFormat": "enum",
}
ENUMS = {
    "PublicOrPrivateHearing": ("Public", "Private"),
    "HearingType": ("In Person", "Virtual"),
    "HearingFormat": ("In person", "Teleconference", "Videoconference", "Written"),
}
# Spans of another kind an LLM mistakes for each type (incorrect_entity).
CONFUSABLE = {
    "HearingDate": ("DecisionDate", "EventDate"),
    "DecisionDate": ("HearingDate", "EventDate"),
    "JudgeName": ("ClaimantName", "CounselName", "InterpreterName"),
    "ClaimantName": ("MemberName", "CounselName"),
    "GPE": ("Organization", "ClaimantName"),
    "Organization": ("FileLabel", "GPE"),
    "Tribunal": ("Respondent",),
    "City": ("Province", "Respondent"),
}


def _date_fields(value: str) -> dict[str, Any]:
    return {
        "description": value,
        "fields": {
            "yyyy": "year",
            "mm": "month, null if unknown",
            "dd": "day, null if unknown",
        },
        "render": "date",
    }


def demo_schema() -> dict[str, Any]:
    """The schema of the default styles (paper section 4), as schema JSON."""
    return {
        "name": "asylex-demo",
        "instructions": "Documents are decisions of the Immigration and Refugee "
        "Board of Canada. Copy as context the entity plus one or two "
        "neighbouring words.",
        "entity_types": {
            "HearingDate": _date_fields("a date on which the hearing was held"),
            "DecisionDate": _date_fields("the date the decision was made or signed"),
            "JudgeName": {
                "description": "the presiding member or judge",
                "fields": {"first_name": "given name", "last_name": "family name"},
                "render": "name",
            },
            "GPE": {
                "description": "a geopolitical entity: country, province, city",
                "display_name": "GPE",
            },
            "Organization": {
                "description": "an organisation, including divisions, "
                "departments, agencies, parties and armed groups"
            },
            "PublicOrPrivateHearing": {
                "description": "whether the hearing was public or private",
                "enum": list(ENUMS["PublicOrPrivateHearing"]),
            },
            "HearingType": {
                "description": "whether the hearing was in person or virtual",
                "enum": list(ENUMS["HearingType"]),
            },
        },
    }


def tribunal_schema() -> dict[str, Any]:
    """The schema of the held-out ``"tribunal"`` style, as schema JSON."""
    return {
        "name": "tribunal-demo",
        "instructions": "Documents are decisions of Canadian administrative "
        "tribunals (social security, employment).",
        "entity_types": {
            "ClaimantName": {
                "description": "the appellant or claimant",
                "fields": {"first_name": "given name", "last_name": "family name"},
                "render": "name",
            },
            "HearingDate": _date_fields("a date on which the hearing was held"),
            "DecisionDate": _date_fields("the date of the decision"),
            "Tribunal": {"description": "the tribunal, division or section deciding"},
            "City": {"description": "a city named in the decision"},
            "HearingFormat": {
                "description": "how the hearing was held",
                "enum": list(ENUMS["HearingFormat"]),
            },
        },
    }

import pytest

from pipeline.checkers.extraction.hypothesis import (
    humanise_type,
    render_hypothesis,
    render_value,
)
from pipeline.checkers.extraction.schema import schema_from_dict
from pipeline.errors import SchemaError


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("HearingDate", "Hearing Date"),
        ("GPE", "GPE"),
        ("hearing_date", "Hearing Date"),
        ("PublicOrPrivateHearing", "Public Or Private Hearing"),
        ("IADFileNumber", "IAD File Number"),
    ],
)
def test_type_names_are_humanised(name, shown):
    assert humanise_type(name) == shown


def test_date_payload_renders_as_iso_including_partial_dates():
    assert render_hypothesis("HearingDate", {"yyyy": 2012, "mm": 1, "dd": "17"}) == (
        "Hearing Date: 2012-01-17"
    )
    assert render_value({"yyyy": "2007", "mm": "10", "dd": None}) == "2007-10"
    assert render_value({"yyyy": "2007", "mm": None, "dd": "3"}) == "2007"


def test_name_and_other_payloads_render_readably():
    assert render_value({"first_name": "Joe", "last_name": "Burrow"}) == "Joe Burrow"
    assert render_value({"amount": 500, "currency": "CAD"}) == "500 CAD"
    assert render_value(None) == "none"
    assert render_hypothesis("GPE", " Canada ") == "GPE: Canada"


def test_schema_overrides_display_name_and_renderer():
    schema = schema_from_dict(
        {
            "entity_types": {
                "Pay": {
                    "display_name": "Award",
                    "fields": {"amount": "", "currency": ""},
                    "render": "{currency} {amount}",
                }
            }
        }
    )
    value = {"amount": 5, "currency": "CAD"}
    assert render_hypothesis("Pay", value, schema=schema) == "Award: CAD 5"


@pytest.mark.parametrize(
    "bad",
    [
        [],
        {"entity_types": {}},
        {"entity_types": {"A": "x"}},
        {"entity_types": {"A": {"fields": {}, "enum": ["x"]}}},
        {"entity_types": {"A": {"enum": [1]}}},
    ],
)
def test_malformed_schema_is_rejected_with_a_reason(bad):
    with pytest.raises(SchemaError):
        schema_from_dict(bad)

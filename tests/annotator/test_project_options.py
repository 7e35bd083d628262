"""A project's kind brings its own settings (``Project.options``): an
extraction project's entity schema, prompt and alignment threshold. The API
checks them by the kind, fills in the defaults, merges a change into what is
stored, and still reads them at the top level for one release."""

import pytest

from annotator.models import Claim, Project
from tests.annotator.factories import SCHEMA, make_claim, make_document

pytestmark = pytest.mark.django_db


def test_an_extraction_project_is_made_with_its_options_and_their_defaults(
    personas, api, settings
):
    settings.DEFAULT_ALIGN_THRESHOLD = 0.55
    client = api(personas.admin)
    reply = client.post(
        "/api/projects/",
        {"name": "new", "options": {"entity_schema": SCHEMA}},
        format="json",
    )
    assert reply.status_code == 201, reply.content
    assert reply.json()["options"] == {
        "entity_schema": SCHEMA,
        "extraction_prompt": "",
        "align_threshold": 0.55,
    }
    assert Project.objects.get(name="new").options == reply.json()["options"]


def test_the_old_top_level_names_are_read_into_the_options(personas, api):
    reply = api(personas.admin).post(
        "/api/projects/",
        {
            "name": "old client",
            "align_threshold": 0.7,
            "extraction_prompt": "Be terse.",
        },
        format="json",
    )
    assert reply.status_code == 201, reply.content
    options = Project.objects.get(name="old client").options
    assert (options["align_threshold"], options["extraction_prompt"]) == (
        0.7,
        "Be terse.",
    )


def test_a_change_is_merged_and_rechecks_only_where_it_can_turn_a_verdict(
    personas, api
):
    project = personas.project
    claim = make_claim(make_document(project), verdict="safe", checked_at="2026-01-01")
    client = api(personas.admin)
    url = f"/api/projects/{project.pk}/"

    reply = client.patch(
        url, {"options": {"extraction_prompt": "Dates only."}}, format="json"
    )
    assert reply.status_code == 200, reply.content
    assert reply.json()["options"]["entity_schema"] == SCHEMA  # kept
    assert Claim.objects.get(pk=claim.pk).checked_at is not None

    reply = client.patch(url, {"options": {"align_threshold": 0.8}}, format="json")
    assert reply.status_code == 200, reply.content
    assert Claim.objects.get(pk=claim.pk).checked_at is None


@pytest.mark.parametrize(
    "kind, options, problem",
    [
        ("extraction", {"align_threshold": 1.5}, "must be between 0 and 1"),
        ("extraction", {"align_threshold": True}, "must be a number"),
        (
            "extraction",
            {"entity_schema": {"entity_types": 5}},
            "option entity_schema: ",
        ),
        ("extraction", {"colour": "red"}, "extraction projects have no option colour"),
        (
            "provenance",
            {"align_threshold": 0.5},
            "provenance projects have no option align_threshold (theirs: none)",
        ),
    ],
)
def test_an_option_its_kind_refuses_is_a_400_naming_it(
    personas, api, kind, options, problem
):
    reply = api(personas.admin).post(
        "/api/projects/",
        {"name": "refused", "kind": kind, "options": options},
        format="json",
    )
    assert reply.status_code == 400, reply.content
    assert problem in str(reply.json()["options"])
    assert not Project.objects.filter(name="refused").exists()

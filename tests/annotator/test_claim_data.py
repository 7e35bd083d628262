"""A claim's own fields live in its ``data``, as its project's checker kind
defines and checks them: an import that does not fit is refused by line,
naming the field, and the API filters claims by their kind's group."""

import io

import pytest
from django.core.exceptions import ValidationError

from annotator.claims import ingest
from tests.annotator.factories import jsonl, make_claim, make_document, make_project

pytestmark = pytest.mark.django_db


def _claim(id, **fields):
    return {"id": id, "document_id": "d1", "type": "GPE", "value": "Toronto", **fields}


def test_a_claim_that_does_not_fit_its_kinds_data_is_refused_by_line():
    project = make_project(kind="citations")
    make_document(project, external_id="d1")
    report = ingest.claims_import(
        project=project,
        stream=io.BytesIO(
            jsonl(_claim("c1", start=0, end=7, form="full"), _claim("c2"))
        ),
        source="c.jsonl",
    )
    assert report.created == 1
    [error] = report.errors
    assert (error.line, error.source) == (2, "c.jsonl")
    assert error.message == (
        "claim 'c2': citations claim data field 'start' must be an integer"
    )
    stored = project.claims.get()
    assert stored.data == {"citation": "Toronto", "start": 0, "end": 7, "form": "full"}
    # What the kind keeps is not kept twice; the record's other fields are.
    assert stored.extra == {}


def test_an_extracted_fields_other_fields_stay_in_extra():
    project = make_project()
    make_document(project, external_id="d1")
    ingest.claims_import(
        project=project,
        stream=io.BytesIO(jsonl(_claim("e1", context="in Toronto", page=3))),
        source="e.jsonl",
    )
    stored = project.claims.get()
    assert stored.data == {"type": "GPE", "value": "Toronto", "context": "in Toronto"}
    assert stored.extra == {"page": 3}


def test_a_claim_is_validated_against_its_projects_kind():
    document = make_document(make_project(kind="provenance"))
    claim = make_claim(document, data={"answer": "In Oslo."})
    with pytest.raises(ValidationError, match="provenance claim data lacks query"):
        claim.full_clean()
    claim.data["query"] = "Where?"
    claim.full_clean()


def test_claims_are_filtered_by_their_kinds_group(personas, api):
    project = personas.project
    document = make_document(project)
    place = make_claim(document, type="GPE")
    make_claim(document, type="HearingDate")
    client = api(personas.admin)

    for query in ("group=GPE", "type=GPE"):  # type: its name before
        rows = client.get(f"/api/claims/?project={project.pk}&{query}").json()
        assert [r["id"] for r in rows["results"]] == [place.pk]
        assert rows["results"][0]["data"]["type"] == "GPE"

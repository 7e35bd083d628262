"""Claims were called predictions, labels annotations, and a label's
correction was its corrected_type and corrected_value, before this release:
for one more release the API, the pages, the commands and the files still read
the old names, so a client or a script written against the last release keeps
working."""

import json
import uuid

import pytest
from django.core.management import call_command

from annotator.models import Adjudication, Label
from tests.annotator.factories import (
    jsonl,
    make_claim,
    make_document,
    make_project,
    upload,
)

pytestmark = pytest.mark.django_db


def test_the_claims_old_address_serves_the_same_claims(personas, api):
    claim = make_claim(make_document(personas.project))
    client = api(personas.admin)
    old = client.get(f"/api/predictions/?project={personas.project.pk}")
    new = client.get(f"/api/claims/?project={personas.project.pk}")
    assert old.status_code == 200 and old.json() == new.json()
    assert [c["id"] for c in old.json()["results"]] == [claim.pk]
    schema = client.get("/api/schema/", {"format": "json"}).json()
    assert not any(path.startswith("/api/predictions/") for path in schema["paths"])


def test_the_labels_old_address_serves_the_same_labels(personas, api):
    claim = make_claim(make_document(personas.project))
    client = api(personas.annotator)
    made = client.post("/api/annotations/", {"claim": claim.pk, "label": "safe"})
    assert made.status_code == 201, made.content
    old = client.get(f"/api/annotations/?project={personas.project.pk}")
    new = client.get(f"/api/labels/?project={personas.project.pk}")
    assert old.status_code == 200 and old.json() == new.json()
    assert [c["id"] for c in new.json()["results"]] == [made.json()["id"]]
    schema = client.get("/api/schema/", {"format": "json"}).json()
    assert not any(path.startswith("/api/annotations/") for path in schema["paths"])


def test_a_label_naming_its_prediction_is_stored_on_that_claim(personas, api):
    project = personas.project
    a, b = (make_claim(make_document(project)) for _ in range(2))
    client = api(personas.annotator)
    sent = {"client_id": str(uuid.uuid4()), "prediction": a.pk, "label": "unsafe"}
    reply = client.post(
        f"/api/projects/{project.pk}/labels/", {"labels": [sent]}, format="json"
    )
    assert reply.json()["results"][0]["claim"] == a.pk
    created = client.post(
        "/api/annotations/", {"prediction": b.pk, "label": "safe"}, format="json"
    )
    assert created.status_code == 201, created.content
    stored = Label.objects.filter(annotator=personas.annotator)
    assert sorted(stored.values_list("claim_id", "label")) == [
        (a.pk, "unsafe"),
        (b.pk, "safe"),
    ]


def test_the_new_name_wins_where_a_request_sends_both(personas, api):
    project = personas.project
    a, b = (make_claim(make_document(project)) for _ in range(2))
    body = {"client_id": str(uuid.uuid4()), "claim": a.pk, "prediction": b.pk}
    api(personas.annotator).post(
        f"/api/projects/{project.pk}/labels/",
        {"labels": [{**body, "label": "safe"}]},
        format="json",
    )
    assert list(Label.objects.values_list("claim_id", flat=True)) == [a.pk]


def test_a_labels_corrected_type_and_value_are_read_as_its_correction(personas, api):
    """Before corrections were keyed by the claim's kind, a label sent them as
    corrected_type and corrected_value: the value is what the claim says, the
    type its group; a kind without groups refuses the type by name."""
    project = personas.project
    a, b = (make_claim(make_document(project)) for _ in range(2))
    client = api(personas.annotator)
    sent = {"client_id": str(uuid.uuid4()), "claim": a.pk, "label": "unsafe"}
    old = {"corrected_type": "LOC", "corrected_value": "Ottawa"}
    client.post(
        f"/api/projects/{project.pk}/labels/", {"labels": [sent | old]}, format="json"
    )
    created = client.post(
        "/api/labels/",
        {"claim": b.pk, "label": "unsafe", "corrected_value": "Ottawa"},
        format="json",
    ).json()
    assert Label.objects.get(claim=a).correction == {
        "type": "LOC",
        "value": "Ottawa",
    }
    assert created["correction"] == {"value": "Ottawa"}
    assert "corrected_value" not in created
    changed = client.patch(
        f"/api/labels/{created['id']}/", {"corrected_type": "LOC"}, format="json"
    )
    assert changed.json()["correction"] == {"type": "LOC"}

    rag = make_project(name="rag", kind="provenance", members=[personas.annotator])
    answer = make_claim(
        make_document(rag), data={"answer": "In Oslo.", "query": "Where?"}
    )
    refused = client.post(
        "/api/labels/",
        {"claim": answer.pk, "label": "unsafe", "corrected_type": "LOC"},
        format="json",
    )
    assert refused.status_code == 400
    assert "cannot correct type (what may be corrected: answer)" in str(
        refused.content, "utf-8"
    )
    assert not Label.objects.filter(claim=answer).exists()


def test_an_adjudication_naming_its_prediction_is_recorded(personas, api):
    project = personas.project
    claim = make_claim(make_document(project))
    for expert, label in (
        (personas.annotator, "safe"),
        (personas.annotator2, "unsafe"),
    ):
        Label.objects.create(claim=claim, annotator=expert, label=label)
    reply = api(personas.admin).post(
        f"/api/projects/{project.pk}/adjudications/",
        {"prediction": claim.pk, "label": "unsafe"},
        format="json",
    )
    assert reply.status_code == 201, reply.content
    assert Adjudication.objects.get(claim=claim).label == "unsafe"


def test_labels_jsonl_with_prediction_ids_and_the_old_export_kind(personas, api):
    project = personas.project
    claim = make_claim(make_document(project))
    client = api(personas.admin)
    lines = jsonl({"prediction_id": claim.external_id, "label": "unsafe"})
    reply = upload(client, "/api/annotations/import/", project, "l.jsonl", lines)
    assert reply.status_code == 200, reply.content
    assert Label.objects.get(claim=claim).label == "unsafe"
    old = client.get(f"/api/projects/{project.pk}/export/", {"kind": "predictions"})
    rows = [json.loads(line) for line in b"".join(old.streaming_content).splitlines()]
    assert [row["id"] for row in rows] == [claim.external_id]


def test_the_claims_page_old_address_redirects(personas, client):
    client.force_login(personas.admin)
    reply = client.get(f"/projects/{personas.project.pk}/predictions/?verdict=unsafe")
    assert reply.status_code == 301
    assert (
        reply["Location"] == f"/projects/{personas.project.pk}/claims/?verdict=unsafe"
    )


def test_the_import_command_keeps_its_old_name(personas, tmp_path):
    document = make_document(personas.project)
    path = tmp_path / "claims.jsonl"
    path.write_bytes(
        jsonl(
            {
                "id": "c1",
                "document_id": document.external_id,
                "type": "location",
                "value": "Jamaica",
                "context": "Jamaica",
            }
        )
    )
    call_command("import_predictions", personas.project.name, str(path))
    assert personas.project.claims.get().external_id == "c1"

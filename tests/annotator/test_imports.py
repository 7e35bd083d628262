"""Bad input: each bad unit gets a clear error; the rest still goes in."""

import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings

from annotator.claims import checking, export, ingest
from annotator.models import Claim, Document, Label
from tests.annotator.factories import (
    DOC_TEXT,
    claims_jsonl,
    documents_jsonl,
    jsonl,
    make_claim,
    make_document,
)

pytestmark = pytest.mark.django_db


def _import_documents(project, *files):
    return ingest.documents_import(
        project=project, files=[(name, io.BytesIO(data)) for name, data in files]
    )


def test_malformed_line_is_reported_with_its_number_and_the_rest_goes_in(personas):
    data = (
        b'{"id": "a", "text": "first"}\n'
        b"{not json\n"
        b"\n"
        b'{"id": "b"}\n'
        b'["a list"]\n'
        b'{"id": "c", "text": "third"}\n'
    )
    report = _import_documents(personas.project, ("docs.jsonl", data))
    assert report.created == 2
    assert [(e.line, e.source) for e in report.errors] == [
        (2, "docs.jsonl"),
        (4, "docs.jsonl"),
        (5, "docs.jsonl"),
    ]
    assert "invalid JSON" in report.errors[0].message
    assert "text" in report.errors[1].message
    assert set(Document.objects.values_list("external_id", flat=True)) == {"a", "c"}


def test_non_utf8_line_and_file_are_rejected(personas):
    data = b'{"id": "a", "text": "ok"}\n{"id": "b", "text": "caf\xe9"}\n'
    report = _import_documents(
        personas.project, ("docs.jsonl", data), ("latin1.txt", b"caf\xe9 au lait")
    )
    assert report.created == 1
    messages = {(e.source, e.line): e.message for e in report.errors}
    assert messages[("docs.jsonl", 2)].startswith("not UTF-8")
    assert messages[("latin1.txt", None)].startswith("not UTF-8")


def test_empty_documents_are_rejected(personas):
    report = _import_documents(
        personas.project,
        ("empty.txt", b""),
        ("blank.txt", b"  \n\n"),
        ("docs.jsonl", b'{"id": "x", "text": "   "}\n'),
        ("good.txt", b"Some text."),
    )
    assert report.created == 1
    assert len(report.errors) == 3
    assert Document.objects.get().external_id == "good"


@override_settings(MAX_DOCUMENT_BYTES=100)
def test_oversize_documents_are_rejected_with_the_limit(personas):
    big = "x" * 101
    report = _import_documents(
        personas.project,
        ("big.txt", big.encode()),
        ("docs.jsonl", jsonl({"id": "big", "text": big}, {"id": "ok", "text": "ok"})),
    )
    assert report.created == 1
    assert all("MAX_DOCUMENT_BYTES" in e.message for e in report.errors)
    assert len(report.errors) == 2


def test_nul_characters_are_rejected(personas):
    report = _import_documents(personas.project, ("nul.txt", b"a\x00b"))
    assert report.created == 0
    assert "NUL" in report.errors[0].message


def test_duplicate_id_upserts_never_a_second_row(personas):
    project = personas.project
    first = _import_documents(project, ("docs.jsonl", documents_jsonl()))
    assert (first.created, first.updated) == (2, 0)
    again = _import_documents(project, ("docs.jsonl", documents_jsonl()))
    assert (again.created, again.updated, again.unchanged) == (0, 0, 2)
    changed = jsonl({"id": "d2", "text": "new text"}, {"id": "d2", "text": "newer"})
    report = _import_documents(project, ("docs.jsonl", changed))
    assert (report.created, report.updated) == (0, 1)
    assert Document.objects.filter(project=project).count() == 2
    assert Document.objects.get(external_id="d2").text == "newer"


def test_txt_file_is_one_document_named_after_the_file(personas):
    report = _import_documents(personas.project, ("decision-17.txt", DOC_TEXT.encode()))
    assert report.created == 1
    document = Document.objects.get()
    assert document.external_id == "decision-17"
    assert document.metadata == {"filename": "decision-17.txt"}


def test_claim_for_unknown_document_is_an_error_on_its_line(personas):
    project = personas.project
    _import_documents(project, ("docs.jsonl", documents_jsonl()))
    data = claims_jsonl() + jsonl(
        {"id": "p-x", "document_id": "nope", "type": "GPE", "value": "x"},
        {"id": "p-y", "document_id": "d1", "type": "GPE"},
    )
    report = ingest.claims_import(
        project=project, stream=io.BytesIO(data), source="p.jsonl"
    )
    assert report.created == 3
    errors = {e.line: e.message for e in report.errors}
    assert set(errors) == {4, 5}
    assert "unknown document_id 'nope'" in errors[4]
    assert "value" in errors[5]


def test_changed_claim_loses_its_verdict_unchanged_keeps_it(personas):
    project = personas.project
    _import_documents(project, ("docs.jsonl", documents_jsonl()))
    ingest.claims_import(project=project, stream=io.BytesIO(claims_jsonl()))
    Claim.objects.update(verdict="safe", hypothesis="h")
    rows = [json.loads(line) for line in claims_jsonl().splitlines()]
    rows[0]["value"] = "Ottawa"
    report = ingest.claims_import(project=project, stream=io.BytesIO(jsonl(*rows)))
    assert (report.created, report.updated, report.unchanged) == (0, 1, 2)
    assert Claim.objects.get(external_id="p-found").verdict == ""
    assert Claim.objects.get(external_id="p-date").verdict == "safe"


def test_labels_import_upserts_and_reports_unknown_claims(personas):
    project = personas.project
    claim = make_claim(make_document(project), external_id="p1")
    data = jsonl(
        {"claim_id": "p1", "label": "unsafe", "note": "invented"},
        {"claim_id": "p2", "label": "safe"},
        {"claim_id": "p1", "label": "maybe"},
    )
    report = ingest.labels_import(project=project, stream=io.BytesIO(data))
    assert report.created == 1
    assert sorted(e.line for e in report.errors) == [2, 3]
    again = ingest.labels_import(
        project=project,
        stream=io.BytesIO(jsonl({"claim_id": "p1", "label": "safe"})),
    )
    assert (again.created, again.updated) == (0, 1)
    stored = Label.objects.get(claim=claim)
    assert stored.label == "safe"


def test_upload_over_api_reports_line_errors(personas, api):
    response = api(personas.admin).post(
        "/api/documents/upload/",
        {
            "project": personas.project.pk,
            "files": [
                SimpleUploadedFile("a.jsonl", b'{"id": "a", "text": "x"}\n{oops\n'),
                SimpleUploadedFile("b.txt", b"plain text document"),
            ],
        },
        format="multipart",
    )
    assert response.status_code == 207, response.content
    body = response.json()
    assert body["created"] == 2
    [error] = body["errors"]
    assert (error["source"], error["line"]) == ("a.jsonl", 2)
    assert error["message"].startswith("invalid JSON: ")


def test_export_round_trips_in_pipeline_formats(personas, api, tmp_path):
    project = personas.project
    _import_documents(project, ("docs.jsonl", documents_jsonl()))
    ingest.claims_import(project=project, stream=io.BytesIO(claims_jsonl()))
    ingest.labels_import(
        project=project,
        stream=io.BytesIO(jsonl({"claim_id": "p-found", "label": "safe"})),
    )
    checking.claims_check(project_id=project.pk)  # no scorer: unscored
    counts = export.project_export(project=project, out_dir=tmp_path)
    assert counts == {"documents": 2, "claims": 3, "labels": 1}
    from pipeline.jsonl import checked_from_json, document_from_json, read_jsonl

    assert not read_jsonl(tmp_path / "documents.jsonl", document_from_json).errors
    checked = read_jsonl(tmp_path / "claims.jsonl", checked_from_json)
    assert not checked.errors
    assert {c.verdict for c in checked.records} == {"unscored", "unsafe"}
    response = api(personas.admin).get(
        f"/api/projects/{project.pk}/export/?kind=labels"
    )
    assert response.status_code == 200
    lines = b"".join(response.streaming_content).decode().splitlines()
    assert json.loads(lines[0]) == {"claim_id": "p-found", "label": "safe"}

"""Bad input through the API, uploads and imports: never a 500, every bad line
reported with its number, every good line around it kept."""

from __future__ import annotations

import json

import pytest
from django.db import connection

from annotator.models import Annotation, Document, Prediction
from tests.annotator.factories import DOC_TEXT, make_document, upload
from tests.conftest import wait_for

pytestmark = [pytest.mark.bad_input, pytest.mark.django_db]

GOOD = {
    "document_id": "d1",
    "type": "GPE",
    "value": "Toronto",
    "context": "took place in Toronto",
}


def _prediction(**fields) -> bytes:
    return json.dumps({**GOOD, **fields}, ensure_ascii=True).encode()


def _deep(levels: int) -> bytes:
    return b'{"id": "bad", "document_id": "d1", "type": "GPE", "value": ' + (
        b"[" * levels + b"]" * levels + b', "context": ""}'
    )


BAD_PREDICTION_LINES = {
    "NaN": b'{"id": "bad", "document_id": "d1", "type": "GPE", "value": NaN}',
    "Infinity": b'{"id": "bad", "document_id": "d1", "type": "GPE", "value": Infinity}',
    "-Infinity": b'{"id": "bad", "document_id": "d1", "value": -Infinity}',
    "NUL in value": _prediction(id="bad", value="Tor\u0000onto"),
    "NUL in context": _prediction(id="bad", context="took\u0000place"),
    "lone surrogate in value": _prediction(id="bad", value="\ud800"),
    "lone surrogate in a key": _prediction(id="bad", **{"extra\udfff": 1}),
    "id too long": _prediction(id="x" * 256),
    "type too long": _prediction(id="bad", type="T" * 201),
    "model too long": _prediction(id="bad", model="m" * 201),
    "document_id too long": _prediction(id="bad", document_id="d" * 256),
    "nested past the recursion limit": _deep(100_000),
    "nested 100 deep": _deep(100),
    "huge integer": b'{"id": "bad", "document_id": "d1", "type": "GPE", "value": '
    + b"9" * 5000
    + b"}",
    "id a number": _prediction(id=7),
    "id a list": _prediction(id=["a"]),
    "value missing": json.dumps(
        {"id": "bad", "document_id": "d1", "type": "GPE"}
    ).encode(),
    "context an object": _prediction(id="bad", context={"text": "x"}),
    "unknown document": _prediction(id="bad", document_id="nowhere"),
    "not JSON": b'{"id": "bad", "document_id": "d1"',
    "latin-1 bytes": b'{"id": "bad", "document_id": "d1", "value": "caf\xe9"}',
    "an array": b'["bad", "d1", "GPE"]',
}


@pytest.mark.parametrize("bad", BAD_PREDICTION_LINES.values(), ids=BAD_PREDICTION_LINES)
def test_bad_prediction_line_is_reported_and_its_neighbours_kept(personas, api, bad):
    project = personas.project
    make_document(project, external_id="d1")
    content = b"\n".join([_prediction(id="before"), bad, _prediction(id="after")])
    response = upload(
        api(personas.admin), "/api/predictions/import/", project, "p.jsonl", content
    )
    assert response.status_code == 200, response.content
    report = response.json()
    assert [e["line"] for e in report["errors"]] == [2], report
    assert report["created"] == 2
    stored = Prediction.objects.filter(project=project)
    assert sorted(stored.values_list("external_id", flat=True)) == ["after", "before"]


def test_a_byte_order_mark_is_not_a_bad_line(personas, api):
    project = personas.project
    make_document(project, external_id="d1")
    content = b"\xef\xbb\xbf" + _prediction(id="a") + b"\n" + _prediction(id="b")
    response = upload(
        api(personas.admin), "/api/predictions/import/", project, "p.jsonl", content
    )
    assert response.json() == {"created": 2, "updated": 0, "unchanged": 0, "errors": []}


@pytest.mark.django_db(transaction=True)
def test_one_bad_line_among_1200_costs_only_that_line_and_the_check_runs(
    personas, api, celery_worker
):
    """The audit's case: line 1,101 bad in a 1,200-line import."""
    project = personas.project
    project.nli_threshold = 0.0
    project.save()
    make_document(project, external_id="d1", text=DOC_TEXT)
    lines = [_prediction(id=f"p{i}") for i in range(1, 1201)]
    lines[1100] = _prediction(id="p1101", value="Tor\u0000onto")
    response = upload(
        api(personas.admin),
        "/api/predictions/import/",
        project,
        "p.jsonl",
        b"\n".join(lines),
    )
    assert response.status_code == 200, response.content
    report = response.json()
    assert [e["line"] for e in report["errors"]] == [1101]
    assert "NUL" in report["errors"][0]["message"]
    assert report["created"] == 1199
    # The check was queued after the import: the worker checks every row.
    wait_for(
        lambda: (
            not Prediction.objects.filter(project=project, checked_at=None).exists()
        ),
        timeout=120,
        worker=celery_worker,
    )
    assert Prediction.objects.filter(project=project).count() == 1199


def test_a_row_the_database_refuses_is_retried_alone_and_reported(personas, api):
    project = personas.project
    make_document(project, external_id="d1")
    # A refusal no check foresaw, from Postgres itself.
    with connection.cursor() as cursor:
        cursor.execute(
            """
            CREATE FUNCTION refuse_poison() RETURNS trigger AS $$
            BEGIN
                IF NEW.external_id = 'poison' THEN
                    RAISE EXCEPTION 'poisoned row';
                END IF;
                RETURN NEW;
            END $$ LANGUAGE plpgsql;
            CREATE TRIGGER refuse_poison BEFORE INSERT ON annotator_prediction
            FOR EACH ROW EXECUTE FUNCTION refuse_poison();
            """
        )
    content = b"\n".join(
        [_prediction(id="a"), _prediction(id="poison"), _prediction(id="b")]
    )
    response = upload(
        api(personas.admin), "/api/predictions/import/", project, "p.jsonl", content
    )
    assert response.status_code == 200, response.content
    report = response.json()
    assert report["created"] == 2
    assert [(e["line"], e["message"]) for e in report["errors"]] == [
        (2, "refused by the database: poisoned row")
    ]
    stored = Prediction.objects.filter(project=project)
    assert sorted(stored.values_list("external_id", flat=True)) == ["a", "b"]


BAD_DOCUMENT_LINES = {
    "NUL in text": json.dumps({"id": "bad", "text": "a\u0000b"}).encode(),
    "text an object": json.dumps({"id": "bad", "text": {"a": 1}}).encode(),
    "empty text": json.dumps({"id": "bad", "text": "   "}).encode(),
    "id too long": json.dumps({"id": "x" * 256, "text": "fine"}).encode(),
    "lone surrogate in metadata": json.dumps(
        {"id": "bad", "text": "fine", "metadata": {"court": "\udc80"}}
    ).encode(),
    "metadata a list": json.dumps(
        {"id": "bad", "text": "t", "metadata": ["IRB"]}
    ).encode(),
}


@pytest.mark.parametrize("bad", BAD_DOCUMENT_LINES.values(), ids=BAD_DOCUMENT_LINES)
def test_bad_document_line_is_reported_and_its_neighbours_kept(personas, api, bad):
    project = personas.project
    content = b"\n".join(
        [
            json.dumps({"id": "before", "text": "one"}).encode(),
            bad,
            json.dumps({"id": "after", "text": "two"}).encode(),
        ]
    )
    response = upload(
        api(personas.admin),
        "/api/documents/upload/",
        project,
        "d.jsonl",
        content,
        "files",
    )
    assert response.status_code == 200, response.content
    assert [e["line"] for e in response.json()["errors"]] == [2]
    stored = Document.objects.filter(project=project)
    assert sorted(stored.values_list("external_id", flat=True)) == ["after", "before"]


def test_an_empty_file_is_refused_by_name(personas, api):
    response = upload(
        api(personas.admin),
        "/api/predictions/import/",
        personas.project,
        "p.jsonl",
        b"",
    )
    assert response.status_code == 400
    assert "empty" in str(response.json()["file"])


BAD_LABEL_LINES = {
    "label not a label": b'{"prediction_id": "p1", "label": "maybe"}',
    "unknown prediction": b'{"prediction_id": "nowhere", "label": "safe"}',
    "prediction_id too long": json.dumps(
        {"prediction_id": "p" * 300, "label": "safe"}
    ).encode(),
    "NUL in the note": json.dumps(
        {"prediction_id": "p1", "label": "safe", "note": "a\u0000"}
    ).encode(),
}


@pytest.mark.parametrize("bad", BAD_LABEL_LINES.values(), ids=BAD_LABEL_LINES)
def test_bad_label_line_is_reported_and_its_neighbours_kept(personas, api, bad):
    project = personas.project
    document = make_document(project, external_id="d1")
    for external_id in ("p0", "p1", "p2"):
        Prediction.objects.create(
            project=project,
            document=document,
            external_id=external_id,
            type="GPE",
            value="Toronto",
        )
    content = b"\n".join(
        [
            b'{"prediction_id": "p0", "label": "safe"}',
            bad,
            b'{"prediction_id": "p2", "label": "unsafe"}',
        ]
    )
    response = upload(
        api(personas.admin), "/api/annotations/import/", project, "l.jsonl", content
    )
    assert response.status_code == 200, response.content
    assert [e["line"] for e in response.json()["errors"]] == [2]
    labelled = Annotation.objects.filter(prediction__project=project)
    assert sorted(labelled.values_list("prediction__external_id", flat=True)) == [
        "p0",
        "p2",
    ]


PROJECT_FILTERS = [
    "/api/documents/",
    "/api/predictions/",
    "/api/annotations/",
    "/api/extraction-runs/",
    "/api/scorer-models/",
    "/api/training-runs/",
    "/api/grading-runs/",
]


@pytest.mark.parametrize("value", ["abc", "99999999999999999999", "1.5", "²"])
@pytest.mark.parametrize("url", PROJECT_FILTERS)
def test_a_project_filter_that_is_not_an_id_is_a_400_naming_it(
    personas, api, url, value
):
    response = api(personas.admin).get(url, {"project": value})
    assert response.status_code == 400, response.content
    assert "project" in response.json()


def test_an_upload_over_the_limit_is_refused_before_it_is_read(personas, api, settings):
    settings.MAX_UPLOAD_BYTES = 1000
    project = personas.project
    make_document(project, external_id="d1")
    content = b"\n".join(_prediction(id=f"p{i}") for i in range(50))
    response = upload(
        api(personas.admin), "/api/predictions/import/", project, "p.jsonl", content
    )
    assert response.status_code == 413, response.content
    assert "MAX_UPLOAD_BYTES" in response.json()["detail"]
    assert not Prediction.objects.exists()


BAD_BODIES = {
    "extraction: project not an id": (
        "/api/extraction-runs/",
        {"project": "abc", "model": "m"},
    ),
    "extraction: model a list": ("/api/extraction-runs/", {"model": ["m"]}),
    "grading: budget not a number": (
        "/api/grading-runs/",
        {"model": "m", "budget": "lots"},
    ),
    "project: name a list": ("/api/projects/", {"name": ["a", "b"]}),
    "training: project unknown": ("/api/training-runs/", {"project": 10**30}),
    "token: password an object": (
        "/api/auth/token/",
        {"username": "admin", "password": {"a": 1}},
    ),
}


@pytest.mark.parametrize("url, body", BAD_BODIES.values(), ids=BAD_BODIES)
def test_a_json_body_of_the_wrong_types_is_a_400(personas, api, url, body):
    body = {"project": personas.project.pk, **body}
    response = api(personas.admin).post(url, body, format="json")
    assert response.status_code == 400, response.content

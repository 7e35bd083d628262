"""Bad input through the API, uploads and imports: never a 500, every bad line
reported with its number, every good line around it kept."""

from __future__ import annotations

import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from annotator.models import Claim, Document, Label, Project
from tests.annotator.factories import DOC_TEXT, make_claim, make_document, upload
from tests.conftest import wait_for

pytestmark = [pytest.mark.bad_input, pytest.mark.django_db]

GOOD = {
    "document_id": "d1",
    "type": "GPE",
    "value": "Toronto",
    "context": "took place in Toronto",
}


def _claim(**fields) -> bytes:
    return json.dumps({**GOOD, **fields}, ensure_ascii=True).encode()


def _deep(levels: int) -> bytes:
    return b'{"id": "bad", "document_id": "d1", "type": "GPE", "value": ' + (
        b"[" * levels + b"]" * levels + b', "context": ""}'
    )


BAD_CLAIM_LINES = {
    "NaN": b'{"id": "bad", "document_id": "d1", "type": "GPE", "value": NaN}',
    "Infinity": b'{"id": "bad", "document_id": "d1", "type": "GPE", "value": Infinity}',
    "-Infinity": b'{"id": "bad", "document_id": "d1", "type": "GPE", '
    b'"value": -Infinity}',
    "NUL in value": _claim(id="bad", value="Tor\u0000onto"),
    "NUL in context": _claim(id="bad", context="took\u0000place"),
    "lone surrogate in value": _claim(id="bad", value="\ud800"),
    "lone surrogate in a key": _claim(id="bad", **{"extra\udfff": 1}),
    "id too long": _claim(id="x" * 256),
    "type too long": _claim(id="bad", type="T" * 201),
    "model too long": _claim(id="bad", model="m" * 201),
    "document_id too long": _claim(id="bad", document_id="d" * 256),
    "nested past the recursion limit": _deep(100_000),
    "nested 100 deep": _deep(100),
    "huge integer": b'{"id": "bad", "document_id": "d1", "type": "GPE", "value": '
    + b"9" * 5000
    + b"}",
    "id a number": _claim(id=7),
    "id a list": _claim(id=["a"]),
    "value missing": json.dumps(
        {"id": "bad", "document_id": "d1", "type": "GPE"}
    ).encode(),
    "context an object": _claim(id="bad", context={"text": "x"}),
    "unknown document": _claim(id="bad", document_id="nowhere"),
    "not JSON": b'{"id": "bad", "document_id": "d1"',
    "latin-1 bytes": b'{"id": "bad", "document_id": "d1", "value": "caf\xe9"}',
    "an array": b'["bad", "d1", "GPE"]',
}


@pytest.mark.parametrize("bad", BAD_CLAIM_LINES.values(), ids=BAD_CLAIM_LINES)
def test_bad_claim_line_is_reported_and_its_neighbours_kept(personas, api, bad):
    project = personas.project
    make_document(project, external_id="d1")
    content = b"\n".join([_claim(id="before"), bad, _claim(id="after")])
    response = upload(
        api(personas.admin), "/api/claims/import/", project, "p.jsonl", content
    )
    assert response.status_code == 207, response.content
    report = response.json()
    assert [e["line"] for e in report["errors"]] == [2], report
    assert report["created"] == 2
    stored = Claim.objects.filter(project=project)
    assert sorted(stored.values_list("external_id", flat=True)) == ["after", "before"]


def test_a_byte_order_mark_is_not_a_bad_line(personas, api):
    project = personas.project
    make_document(project, external_id="d1")
    content = b"\xef\xbb\xbf" + _claim(id="a") + b"\n" + _claim(id="b")
    response = upload(
        api(personas.admin), "/api/claims/import/", project, "p.jsonl", content
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
    lines = [_claim(id=f"p{i}") for i in range(1, 1201)]
    lines[1100] = _claim(id="p1101", value="Tor\u0000onto")
    response = upload(
        api(personas.admin),
        "/api/claims/import/",
        project,
        "p.jsonl",
        b"\n".join(lines),
    )
    assert response.status_code == 207, response.content
    report = response.json()
    assert [e["line"] for e in report["errors"]] == [1101]
    assert "NUL" in report["errors"][0]["message"]
    assert report["created"] == 1199
    # The check was queued after the import: the worker checks every row.
    wait_for(
        lambda: not Claim.objects.filter(project=project, checked_at=None).exists(),
        timeout=120,
        worker=celery_worker,
    )
    assert Claim.objects.filter(project=project).count() == 1199


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
    content = b"\n".join([_claim(id="a"), _claim(id="poison"), _claim(id="b")])
    response = upload(
        api(personas.admin), "/api/claims/import/", project, "p.jsonl", content
    )
    assert response.status_code == 207, response.content
    report = response.json()
    assert report["created"] == 2
    assert [(e["line"], e["message"]) for e in report["errors"]] == [
        (2, "refused by the database: poisoned row")
    ]
    stored = Claim.objects.filter(project=project)
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
    assert response.status_code == 207, response.content
    assert [e["line"] for e in response.json()["errors"]] == [2]
    stored = Document.objects.filter(project=project)
    assert sorted(stored.values_list("external_id", flat=True)) == ["after", "before"]


def test_an_empty_file_is_refused_by_name(personas, api):
    response = upload(
        api(personas.admin),
        "/api/claims/import/",
        personas.project,
        "p.jsonl",
        b"",
    )
    assert response.status_code == 400
    assert "empty" in str(response.json()["file"])


BAD_LABEL_LINES = {
    "label not a label": b'{"claim_id": "p1", "label": "maybe"}',
    "unknown claim": b'{"claim_id": "nowhere", "label": "safe"}',
    "claim_id too long": json.dumps({"claim_id": "p" * 300, "label": "safe"}).encode(),
    "NUL in the note": json.dumps(
        {"claim_id": "p1", "label": "safe", "note": "a\u0000"}
    ).encode(),
    "note an object": b'{"claim_id": "p1", "label": "safe", "note": {"a": 1}}',
    "note too long": json.dumps(
        {"claim_id": "p1", "label": "safe", "note": "n" * 10_001}
    ).encode(),
    "NaN in an extra field": b'{"claim_id": "p1", "label": "safe", "c": NaN}',
    "lone surrogate in claim_id": b'{"claim_id": "p\\udc00", "label": "safe"}',
}


@pytest.mark.parametrize("bad", BAD_LABEL_LINES.values(), ids=BAD_LABEL_LINES)
def test_bad_label_line_is_reported_and_its_neighbours_kept(personas, api, bad):
    project = personas.project
    document = make_document(project, external_id="d1")
    for external_id in ("p0", "p1", "p2"):
        make_claim(document, external_id=external_id)
    content = b"\n".join(
        [
            b'{"claim_id": "p0", "label": "safe"}',
            bad,
            b'{"claim_id": "p2", "label": "unsafe", "note": "invented"}',
        ]
    )
    response = upload(
        api(personas.admin), "/api/labels/import/", project, "l.jsonl", content
    )
    assert response.status_code == 207, response.content
    assert [e["line"] for e in response.json()["errors"]] == [2]
    labelled = Label.objects.filter(claim__project=project)
    assert dict(labelled.values_list("claim__external_id", "note")) == {
        "p0": "",
        "p2": "invented",
    }


PROJECT_FILTERS = [
    "/api/documents/",
    "/api/claims/",
    "/api/labels/",
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


@pytest.mark.parametrize("value", ["²", "99999999999999999999"])
def test_a_member_to_remove_that_is_not_an_id_is_a_400_naming_it(personas, api, value):
    project = personas.project
    response = api(personas.admin).delete(
        f"/api/projects/{project.pk}/members/?user={value}"
    )
    assert response.status_code == 400, response.content
    assert response.json() == {"user": "must be a user id (a whole number)"}
    assert project.memberships.count() == 2


def test_an_upload_over_the_limit_is_refused_before_it_is_read(personas, api, settings):
    settings.MAX_UPLOAD_BYTES = 1000
    project = personas.project
    make_document(project, external_id="d1")
    content = b"\n".join(_claim(id=f"p{i}") for i in range(50))
    response = upload(
        api(personas.admin), "/api/claims/import/", project, "p.jsonl", content
    )
    assert response.status_code == 413, response.content
    assert "MAX_UPLOAD_BYTES" in response.json()["detail"]
    assert not Claim.objects.exists()


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


def test_an_extraction_run_with_a_price_that_is_not_a_number_never_starts(
    personas, api
):
    """Its cost used to be computed from the raw value when the run ended."""
    project = personas.project
    project.llm_base_url = "http://127.0.0.1:9/v1"
    project.save()
    response = api(personas.admin).post(
        "/api/extraction-runs/",
        {
            "project": project.pk,
            "model": "m",
            "params": {"price_per_mtok_prompt": "cheap"},
        },
        format="json",
    )
    assert response.status_code == 400, response.content
    assert "prices are set by the deployment" in str(response.json())
    assert not project.extraction_runs.exists()


# --- values only the database would have refused --------------------------


def _docs(*rows: dict) -> bytes:
    return b"\n".join(json.dumps(r).encode() for r in rows)


BAD_METADATA = {
    "NaN in metadata": b'{"id": "bad", "text": "t", "metadata": {"n": NaN}}',
    "overflowing number in metadata": b'{"id": "bad", "text": "t", "metadata": '
    b'{"n": 1e999}}',
    "NUL in a metadata key": _docs({"id": "bad", "text": "t", "metadata": {"\0": 1}}),
    "metadata nested 100 deep": b'{"id": "bad", "text": "t", "metadata": {"m": '
    + b"[" * 100
    + b"]" * 100
    + b"}}",
}


@pytest.mark.parametrize("bad", BAD_METADATA.values(), ids=BAD_METADATA)
def test_document_metadata_the_database_refuses_is_a_line_error(personas, api, bad):
    project = personas.project
    content = b"\n".join(
        [
            _docs({"id": "before", "text": "one"}),
            bad,
            _docs({"id": "after", "text": "2"}),
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
    assert response.status_code == 207, response.content
    [error] = response.json()["errors"]
    assert (error["source"], error["line"]) == ("d.jsonl", 2)
    stored = Document.objects.filter(project=project)
    assert sorted(stored.values_list("external_id", flat=True)) == ["after", "before"]


@pytest.mark.parametrize(
    "bad, refusal",
    [
        (_claim(id="bad", model="gpt\u0000"), "NUL"),
        (_claim(id="bad", model="half a pair \ud83d"), "not valid Unicode"),
        (_claim(id="bad", value={"k": "\u0000"}), "\\u0000"),
    ],
    ids=["NUL in text", "lone surrogate in text", "NUL in JSON"],
)
def test_a_refusal_in_the_third_batch_costs_only_its_line(
    personas, monkeypatch, bad, refusal
):
    """The audit's 1,200 lines again, with the checks before the database
    switched off: the batch is retried row by row and keeps its 199 good rows."""
    from annotator.claims import ingest

    monkeypatch.setattr("pipeline.jsonl.value_problem", lambda value, **kw: None)
    project = personas.project
    make_document(project, external_id="d1")
    lines = [_claim(id=f"p{i}") for i in range(1, 1201)]
    lines[1100] = bad
    report = ingest.claims_import(
        project=project, stream=io.BytesIO(b"\n".join(lines)), source="p.jsonl"
    )
    assert [(e.line, e.source) for e in report.errors] == [(1101, "p.jsonl")]
    assert report.errors[0].message.startswith("refused by the database: ")
    assert refusal in report.errors[0].message
    assert "INSERT" not in report.errors[0].message  # no SQL echoed back
    assert report.created == 1199
    assert Claim.objects.filter(project=project).count() == 1199


BAD_JSON_FIELDS = {
    "NUL in a project's models": (
        "post",
        "/api/projects/",
        {"name": "new", "llm_models": ["gpt\u0000"]},
        "llm_models",
        "NUL",
    ),
    "lone surrogate in a project's models": (
        "post",
        "/api/projects/",
        {"name": "new", "llm_models": ["\ud800"]},
        "llm_models",
        "lone surrogate",
    ),
    "lone surrogate in a schema key": (
        "patch",
        "/api/projects/{pk}/",
        {"options": {"entity_schema": {"entity_types": {"GPE\udc00": {}}}}},
        "options",
        "lone surrogate",
    ),
    "NUL in extraction params": (
        "post",
        "/api/extraction-runs/",
        {"model": "m", "params": {"stop": "\u0000"}},
        "params",
        "NUL",
    ),
    "grading params nested 100 deep": (
        "post",
        "/api/grading-runs/",
        {
            "model": "m",
            "budget": "1",
            "params": {"p": json.loads("[" * 100 + "]" * 100)},
        },
        "params",
        "nested deeper",
    ),
}


@pytest.mark.parametrize(
    "method, url, body, field, problem", BAD_JSON_FIELDS.values(), ids=BAD_JSON_FIELDS
)
def test_a_json_field_that_would_not_store_is_a_400_naming_it(
    personas, api, method, url, body, field, problem
):
    # Stored, the surrogate made every later read of the project a 500.
    project = personas.project
    body = {"project": project.pk, **body}
    # Sent as \u escapes: a lone surrogate has no UTF-8 encoding to send.
    response = getattr(api(personas.admin), method)(
        url.format(pk=project.pk), json.dumps(body), content_type="application/json"
    )
    assert response.status_code == 400, response.content
    assert problem in str(response.json()[field])
    assert not Project.objects.filter(name="new").exists()
    assert api(personas.admin).get(f"/api/projects/{project.pk}/").status_code == 200


def test_a_value_the_database_refuses_is_a_400_not_a_500(personas, api):
    # A refusal no serializer foresaw (SQLSTATE class 22, a data exception).
    with connection.cursor() as cursor:
        cursor.execute(
            """
            CREATE FUNCTION refuse_description() RETURNS trigger AS $$
            BEGIN
                IF NEW.description = 'poison' THEN
                    RAISE EXCEPTION 'poisoned description' USING ERRCODE = '22023',
                        DETAIL = 'the trigger says no';
                END IF;
                RETURN NEW;
            END $$ LANGUAGE plpgsql;
            CREATE TRIGGER refuse_description BEFORE UPDATE ON annotator_project
            FOR EACH ROW EXECUTE FUNCTION refuse_description();
            """
        )
    response = api(personas.admin).patch(
        f"/api/projects/{personas.project.pk}/",
        {"description": "poison"},
        format="json",
    )
    assert response.status_code == 400, response.content
    assert response.json() == {
        "detail": "a value was refused by the database: poisoned description "
        "(the trigger says no)"
    }
    # (The test's transaction is aborted now; the rollback at its end drops the
    # trigger with it.)


@pytest.mark.parametrize(
    "url, key",
    [
        ("/api/projects/", "options"),
        ("/api/training-runs/", "params"),
        ("/api/grading-runs/", "params"),
    ],
)
def test_a_json_body_nested_past_the_recursion_limit_is_a_400(personas, api, url, key):
    deep = b"[" * 100_000 + b"]" * 100_000
    body = b'{"project": %d, "name": "n", "%s": %s}' % (
        personas.project.pk,
        key.encode(),
        deep,
    )
    response = api(personas.admin).post(url, body, content_type="application/json")
    assert response.status_code == 400, response.content
    assert "nested too deeply" in response.json()["detail"]


# --- files -------------------------------------------------------------------


def test_an_empty_file_among_others_is_reported_by_name_and_the_rest_go_in(
    personas, api
):
    project = personas.project
    response = api(personas.admin).post(
        "/api/documents/upload/",
        {
            "project": project.pk,
            "files": [
                SimpleUploadedFile("empty.jsonl", b""),
                SimpleUploadedFile("empty.txt", b""),
                SimpleUploadedFile("blank.jsonl", b"\n  \n"),
                SimpleUploadedFile("good.txt", b"A decision."),
            ],
        },
        format="multipart",
    )
    assert response.status_code == 207, response.content
    errors = {e["source"]: e for e in response.json()["errors"]}
    assert set(errors) == {"empty.jsonl", "empty.txt", "blank.jsonl"}
    assert errors["blank.jsonl"]["message"] == "the file has no records"
    assert errors["empty.txt"]["message"] == "document is empty"
    assert list(Document.objects.values_list("external_id", flat=True)) == ["good"]


def test_a_file_of_blank_lines_is_refused_not_silently_empty(personas, api):
    response = upload(
        api(personas.admin),
        "/api/claims/import/",
        personas.project,
        "p.jsonl",
        b"\n\r\n   \n",
    )
    assert response.status_code == 400, response.content
    assert response.json()["errors"] == [
        {"source": "p.jsonl", "line": None, "message": "the file has no records"}
    ]


def test_a_text_document_loses_its_byte_order_mark(personas, api):
    response = upload(
        api(personas.admin),
        "/api/documents/upload/",
        personas.project,
        "decision.txt",
        b"\xef\xbb\xbfThe hearing took place in Toronto.",
        "files",
    )
    assert response.status_code == 200, response.content
    assert response.json()["created"] == 1
    assert Document.objects.get().text == "The hearing took place in Toronto."


def test_a_content_length_over_the_limit_is_refused_before_parsing(
    personas, api, settings
):
    settings.MAX_UPLOAD_BYTES = 1000
    # Not even multipart: a parser that read it would answer 400, not 413.
    response = api(personas.admin).post(
        "/api/documents/upload/",
        b"x" * 1001,
        content_type="multipart/form-data; boundary=nothing",
    )
    assert response.status_code == 413, response.content
    assert response.json()["detail"] == (
        "1001 bytes sent, over the limit of 1000 bytes (MAX_UPLOAD_BYTES); "
        "split the upload"
    )


def test_several_files_over_the_limit_together_are_a_413(personas, api, settings):
    settings.MAX_UPLOAD_BYTES = 2000
    files = [SimpleUploadedFile(f"d{i}.txt", b"y" * 800) for i in range(3)]
    response = api(personas.admin).post(
        "/api/documents/upload/",
        {"project": personas.project.pk, "files": files},
        format="multipart",
    )
    assert response.status_code == 413, response.content
    assert "MAX_UPLOAD_BYTES" in response.json()["detail"]
    assert not Document.objects.exists()


# --- labels ------------------------------------------------------------------

# --- management commands -----------------------------------------------------


def test_a_command_lists_bad_lines_and_exits_1_when_some_went_in(personas, tmp_path):
    project = personas.project
    make_document(project, external_id="d1")
    path = tmp_path / "p.jsonl"
    path.write_bytes(b"\n".join([_claim(id="a"), BAD_CLAIM_LINES["NaN"], b"{oops"]))
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(CommandError, match="some claims skipped") as raised:
        call_command("import_claims", project.name, str(path), stdout=out, stderr=err)
    assert raised.value.returncode == 1
    assert "1 created, 0 updated, 0 unchanged, 2 errors" in out.getvalue()
    assert Claim.objects.filter(project=project, external_id="a").exists()
    assert f"{path}:2: invalid JSON: NaN is not a JSON number" in err.getvalue()
    assert f"{path}:3: invalid JSON" in err.getvalue()


@pytest.mark.parametrize(
    "command, content",
    [
        ("import_claims", BAD_CLAIM_LINES["lone surrogate in value"]),
        ("import_documents", b'{"id": "d", "text": "a\\u0000b"}'),
        ("import_labels", b'{"claim_id": "p", "label": "safe", "x": Infinity}'),
        ("import_claims", b""),
    ],
    ids=["claims", "documents", "labels", "empty file"],
)
def test_a_command_that_imports_nothing_exits_2(personas, tmp_path, command, content):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    err = io.StringIO()
    with pytest.raises(CommandError, match="imported: every record was refused") as e:
        call_command(
            command, personas.project.name, str(path), stdout=io.StringIO(), stderr=err
        )
    assert e.value.returncode == 2
    assert "bad.jsonl" in err.getvalue()
    assert not Document.objects.filter(external_id="d").exists()

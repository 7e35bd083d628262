"""What an import answers and a command exits with: every line used (200, exit
0), some lines skipped and the rest stored (207, exit 1), nothing stored or
nothing done (400, exit 2). The line-by-line report comes with each."""

from __future__ import annotations

import json
from unittest import mock

import pytest
from django.core.management import ManagementUtility
from django.db import connections

from annotator.claims import checking
from annotator.models import Claim, Document, Label
from tests.annotator.factories import (
    claims_jsonl,
    documents_jsonl,
    jsonl,
    make_claim,
    make_document,
    upload,
)

pytestmark = pytest.mark.django_db

GOOD = {
    "document_id": "d1",
    "type": "GPE",
    "value": "Toronto",
    "context": "took place in Toronto",
}


def _claims(*ids: str) -> bytes:
    return jsonl(*({**GOOD, "id": i} for i in ids))


def manage(*argv: str) -> int:
    """The exit status ``manage.py argv`` gives, run in this process and this
    test's transaction (run_from_argv would close the connection under it)."""
    command = ManagementUtility(["manage.py", *argv]).fetch_command(argv[0])
    with mock.patch.object(connections, "close_all"):
        try:
            command.run_from_argv(["manage.py", *argv, "--skip-checks"])
        except SystemExit as e:
            return e.code
    return 0


# --- the API -----------------------------------------------------------------


def test_a_claims_file_of_bad_lines_is_a_400_and_stores_nothing(personas, api):
    project = personas.project
    make_document(project, external_id="d1")
    content = b"\n".join(
        [b"{oops", json.dumps({**GOOD, "id": "p", "document_id": "nowhere"}).encode()]
    )
    response = upload(
        api(personas.admin), "/api/claims/import/", project, "p.jsonl", content
    )
    assert response.status_code == 400, response.content
    report = response.json()
    assert report["created"] == report["updated"] == report["unchanged"] == 0
    assert [(e["source"], e["line"]) for e in report["errors"]] == [
        ("p.jsonl", 1),
        ("p.jsonl", 2),
    ]
    assert "unknown document" in report["errors"][1]["message"]
    assert not Claim.objects.exists()


def test_one_bad_claim_line_is_a_207_naming_it_and_the_rest_stored(personas, api):
    project = personas.project
    make_document(project, external_id="d1")
    content = _claims("a") + b'{"id": "b", "value": NaN}\n' + _claims("c")
    response = upload(
        api(personas.admin), "/api/claims/import/", project, "p.jsonl", content
    )
    assert response.status_code == 207, response.content
    report = response.json()
    assert report["created"] == 2
    [error] = report["errors"]
    assert (error["source"], error["line"]) == ("p.jsonl", 2)
    assert "NaN" in error["message"]
    stored = Claim.objects.filter(project=project)
    assert sorted(stored.values_list("external_id", flat=True)) == ["a", "c"]


def test_an_import_of_good_lines_is_a_200_the_second_time_too(personas, api):
    project = personas.project
    make_document(project, external_id="d1")
    client = api(personas.admin)
    for created, unchanged in ((2, 0), (0, 2)):
        response = upload(
            client,
            "/api/claims/import/",
            project,
            "p.jsonl",
            _claims("a", "b"),
        )
        assert response.status_code == 200, response.content
        assert (response.json()["created"], response.json()["unchanged"]) == (
            created,
            unchanged,
        )


def test_documents_all_refused_are_a_400(personas, api):
    response = upload(
        api(personas.admin),
        "/api/documents/upload/",
        personas.project,
        "d.jsonl",
        jsonl({"id": "a", "text": "  "}, {"id": "b"}),
        "files",
    )
    assert response.status_code == 400, response.content
    assert [e["line"] for e in response.json()["errors"]] == [1, 2]
    assert not Document.objects.exists()


def test_labels_all_refused_are_a_400_and_some_refused_a_207(personas, api):
    project = personas.project
    make_claim(
        make_document(project, external_id="d1"), external_id="p1", checked_at=None
    )
    client = api(personas.admin)
    bad = jsonl({"claim_id": "nowhere", "label": "safe"})
    response = upload(client, "/api/labels/import/", project, "l.jsonl", bad)
    assert response.status_code == 400, response.content
    assert response.json()["errors"][0]["line"] == 1
    assert not Label.objects.exists()

    mixed = jsonl({"claim_id": "p1", "label": "unsafe"}) + bad
    response = upload(client, "/api/labels/import/", project, "l.jsonl", mixed)
    assert response.status_code == 207, response.content
    assert response.json()["errors"][0]["line"] == 2
    assert Label.objects.get().label == "unsafe"


# --- management commands -----------------------------------------------------


def test_import_commands_exit_0_1_2_by_how_much_was_used(personas, tmp_path, capsys):
    project = personas.project.name
    good, mixed, bad = (tmp_path / f"{n}.jsonl" for n in ("good", "mixed", "bad"))
    good.write_bytes(documents_jsonl())
    mixed.write_bytes(claims_jsonl() + b"{broken\n")
    bad.write_bytes(b"{broken\n")

    assert manage("import_documents", project, str(good)) == 0
    assert manage("import_claims", project, str(mixed)) == 1
    err = capsys.readouterr().err
    assert f"{mixed}:4: invalid JSON" in err
    assert "some claims skipped (listed above)" in err
    assert Claim.objects.count() == 3
    assert manage("import_labels", project, str(bad)) == 2
    assert f"{bad}:1: invalid JSON" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["import_claims", "asylum", "{missing}"],
        ["import_documents", "asylum", "{empty folder}"],
        ["import_labels", "no-such-project", "{file}"],
        ["export_project", "no-such-project", "--out", "{out}"],
        ["export_project", "asylum", "--out", "{file}"],
        ["run_pipeline", "no-such-project"],
        ["import_claims", "asylum"],
        ["run_pipeline", "asylum", "--no-such-option"],
    ],
    ids=[
        "missing file",
        "empty folder",
        "unknown project",
        "export of an unknown project",
        "export into a file",
        "check of an unknown project",
        "argument missing",
        "unknown option",
    ],
)
def test_a_command_that_can_do_nothing_exits_2(personas, tmp_path, capsys, argv):
    (tmp_path / "empty").mkdir()
    (tmp_path / "file").write_bytes(b'{"claim_id": "p", "label": "safe"}\n')
    paths = {
        "{missing}": str(tmp_path / "missing.jsonl"),
        "{empty folder}": str(tmp_path / "empty"),
        "{file}": str(tmp_path / "file"),
        "{out}": str(tmp_path / "out"),
    }
    assert manage(*(paths.get(a, a) for a in argv)) == 2
    assert capsys.readouterr().err.strip()


def test_export_and_check_exit_0(personas, tmp_path, capsys):
    project = personas.project
    make_claim(make_document(project, external_id="d1"), checked_at=None)
    assert manage("run_pipeline", project.name) == 0
    assert "checked 1:" in capsys.readouterr().out
    assert manage("export_project", project.name, "--out", str(tmp_path)) == 0
    assert (tmp_path / "claims.jsonl").exists()


def test_run_pipeline_exits_1_when_some_claims_were_not_checked(
    personas, monkeypatch, capsys
):
    summary = checking.CheckSummary(checked=2, errors=["p.jsonl:3: no document"])
    monkeypatch.setattr(checking, "claims_check", lambda **kw: summary)
    assert manage("run_pipeline", personas.project.name) == 1
    assert "p.jsonl:3: no document" in capsys.readouterr().err
    summary.checked = 0
    assert manage("run_pipeline", personas.project.name) == 2


def test_run_pipeline_on_a_broken_schema_exits_2(personas, capsys):
    project = personas.project
    make_claim(make_document(project, external_id="d1"), checked_at=None)
    project.options["entity_schema"] = {"entity_types": 5}
    project.save(update_fields=["options"])
    assert manage("run_pipeline", project.name) == 2
    assert "asylum" in capsys.readouterr().err
    assert Claim.objects.get().checked_at is None

import copy
import io
import uuid

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.annotator.factories import make_claim, make_document

pytestmark = pytest.mark.django_db


def test_claims_page_lists_claims_with_verdicts(personas, client):
    document = make_document(personas.project, external_id="decision-1")
    make_claim(document, verdict="unsafe", reason="not_in_document")
    make_claim(document, value="Colombia", context="citizen of Colombia")
    client.force_login(personas.admin)
    response = client.get(f"/projects/{personas.project.pk}/claims/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "decision-1" in html and "Not in document" in html and "pending" in html
    unsafe = client.get(f"/projects/{personas.project.pk}/claims/?verdict=unsafe")
    assert "Colombia" not in unsafe.content.decode()


def test_an_unchecked_claim_reads_in_its_kinds_words_on_every_page(
    personas, client, api
):
    """Before its check writes the hypothesis, a claim reads as the labeling
    page names it (the schema's display name), on the claims page and in the
    expert's own labels too."""
    project = personas.project
    schema = copy.deepcopy(project.options["entity_schema"])
    schema["entity_types"]["GPE"]["display_name"] = "Place"
    project.options = {**project.options, "entity_schema": schema}
    project.save()
    claim = make_claim(make_document(project), value="Toronto")
    client.force_login(personas.admin)
    html = client.get(f"/projects/{project.pk}/claims/").content.decode()
    assert "Place: Toronto" in html and "GPE: Toronto" not in html
    expert = api(personas.annotator)
    label = {"client_id": str(uuid.uuid4()), "claim": claim.pk, "label": "safe"}
    expert.post(
        f"/api/projects/{project.pk}/labels/", {"labels": [label]}, format="json"
    )
    mine = expert.get(f"/api/projects/{project.pk}/labels/mine/").json()
    assert [m["hypothesis"] for m in mine["results"]] == ["Place: Toronto"]


def test_experts_see_no_verdicts_where_the_project_hides_machine_scores(
    personas, client
):
    document = make_document(personas.project, external_id="decision-1")
    make_claim(document, verdict="unsafe", reason="not_in_document", score=0.1)
    client.force_login(personas.annotator)
    url = f"/projects/{personas.project.pk}/claims/"
    html = client.get(url).content.decode()
    assert "decision-1" in html
    assert "Not in document" not in html and "Unsafe" not in html
    # Nor through the filter: the page ignores it.
    assert "decision-1" in client.get(url + "?verdict=safe").content.decode()
    personas.project.show_machine_scores = True
    personas.project.save()
    assert "Not in document" in client.get(url).content.decode()


def test_outsider_gets_404_on_the_page(personas, client):
    client.force_login(personas.outsider)
    response = client.get(f"/projects/{personas.project.pk}/claims/")
    assert response.status_code == 404


def test_commands_import_check_and_export(
    personas, tmp_path, django_capture_on_commit_callbacks
):
    from tests.annotator.factories import claims_jsonl, documents_jsonl

    (tmp_path / "docs.jsonl").write_bytes(documents_jsonl())
    (tmp_path / "preds.jsonl").write_bytes(claims_jsonl() + b"{broken\n")
    out, err = io.StringIO(), io.StringIO()
    call_command(
        "import_documents",
        "fresh",
        str(tmp_path / "docs.jsonl"),
        "--create",
        stdout=out,
        stderr=err,
    )
    assert "documents: 2 created" in out.getvalue()
    # The project has no schema yet; the default display names apply.
    # Exit status 1: a line was skipped, the others went in.
    with pytest.raises(CommandError, match="some claims skipped") as skipped:
        call_command(
            "import_claims",
            "fresh",
            str(tmp_path / "preds.jsonl"),
            stdout=out,
            stderr=err,
        )
    assert skipped.value.returncode == 1
    assert "claims: 3 created, 0 updated, 0 unchanged, 1 errors" in out.getvalue()
    assert "preds.jsonl:4: invalid JSON" in err.getvalue()
    call_command("run_pipeline", "fresh", stdout=out, stderr=err)
    assert (
        "checked 3: 0 safe, 1 unsafe, 2 unscored (scorer: none yet: nothing is "
        "judged safe)" in out.getvalue()
    )
    call_command("export_project", "fresh", "--out", str(tmp_path / "out"), stdout=out)
    assert "claims.jsonl: 3 records" in out.getvalue()
    assert '"verdict": "unsafe"' in (tmp_path / "out" / "claims.jsonl").read_text()

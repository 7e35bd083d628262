"""Documents and claims in over the API, a real Celery worker checks
them, verdicts come back over the API."""

import pytest

from tests.annotator.factories import claims_jsonl, documents_jsonl, upload
from tests.conftest import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def project(personas):
    # The worker scores with the untrained packaged model (arbitrary scores):
    # threshold 0 leaves the verdicts to alignment, which these tests assert.
    personas.project.nli_threshold = 0.0
    personas.project.save(update_fields=["nli_threshold"])
    return personas.project


def test_uploaded_claims_are_checked_by_the_worker(
    personas, project, api, celery_worker
):
    admin = api(personas.admin)

    response = upload(
        admin,
        "/api/documents/upload/",
        project,
        "docs.jsonl",
        documents_jsonl(),
        "files",
    )
    assert response.status_code == 200, response.content
    assert response.json()["created"] == 2

    response = upload(
        admin, "/api/claims/import/", project, "preds.jsonl", claims_jsonl()
    )
    assert response.status_code == 200, response.content
    assert response.json() == {"created": 3, "updated": 0, "unchanged": 0, "errors": []}

    def all_checked():
        rows = admin.get(f"/api/claims/?project={project.pk}").json()["results"]
        return rows if rows and all(r["verdict"] for r in rows) else None

    rows = {r["external_id"]: r for r in wait_for(all_checked, worker=celery_worker)}
    assert rows["p-found"]["verdict"] == "safe"
    assert rows["p-found"]["hypothesis"] == "GPE: Toronto"
    assert rows["p-found"]["premise"] == "The hearing took place in Toronto"
    assert rows["p-date"]["verdict"] == "safe"
    assert rows["p-date"]["hypothesis"] == "Hearing Date: 2012-01-17"
    assert rows["p-invented"]["verdict"] == "unsafe"
    assert rows["p-invented"]["reason"] == "not_in_document"
    # Aligned claims were scored by the worker's NLI scorer; the
    # unaligned one needs no score.
    [score] = rows["p-found"]["scores"]
    assert score["scorer"].startswith("nli:") and 0 <= score["score"] <= 1
    assert rows["p-found"]["score"] == score["score"]
    assert rows["p-invented"]["scores"] == []

    unsafe = admin.get(f"/api/claims/?project={project.pk}&verdict=unsafe")
    assert [r["external_id"] for r in unsafe.json()["results"]] == ["p-invented"]
    # An expert labels blind: the machine's verdicts stay hidden from them.
    expert_rows = api(personas.annotator).get(f"/api/claims/?project={project.pk}")
    assert expert_rows.json()["count"] == 3
    assert not any("verdict" in r for r in expert_rows.json()["results"])
    # The outsider sees none of it.
    outsider = api(personas.outsider).get("/api/claims/").json()
    assert outsider["count"] == 0


def test_changed_document_text_is_checked_again(personas, project, api, celery_worker):
    admin = api(personas.admin)
    upload(
        admin, "/api/documents/upload/", project, "d.jsonl", documents_jsonl(), "files"
    )
    upload(admin, "/api/claims/import/", project, "p.jsonl", claims_jsonl())

    def verdict_of(external_id):
        rows = admin.get(f"/api/claims/?project={project.pk}").json()["results"]
        return {r["external_id"]: r["verdict"] for r in rows}.get(external_id)

    assert wait_for(lambda: verdict_of("p-found") == "safe", worker=celery_worker)

    # The corrected document no longer holds the quoted context at all.
    new_text = b'{"id": "d1", "text": "Decided on the papers; no oral hearing."}\n'
    response = upload(
        admin, "/api/documents/upload/", project, "d1.jsonl", new_text, "files"
    )
    assert response.json()["updated"] == 1

    assert wait_for(lambda: verdict_of("p-found") == "unsafe", worker=celery_worker)

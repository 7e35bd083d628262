import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.annotator.factories import make_claim, make_document

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "url",
    [
        "/api/projects/",
        "/api/documents/",
        "/api/claims/",
        "/api/labels/",
        "/api/extraction-runs/",
        "/api/scorer-models/",
        "/api/training-runs/",
        "/api/schema/",
        "/api/docs/",
    ],
)
def test_anonymous_users_see_nothing(personas, api, url):
    response = api().get(url)
    assert response.status_code in (401, 403)


def test_anonymous_page_redirects_to_login(personas, client):
    response = client.get(f"/projects/{personas.project.pk}/claims/")
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


def test_annotators_see_only_their_projects(personas, api):
    names = [
        p["name"]
        for p in api(personas.annotator).get("/api/projects/").json()["results"]
    ]
    assert names == ["asylum"]
    names = [
        p["name"]
        for p in api(personas.outsider).get("/api/projects/").json()["results"]
    ]
    assert names == ["elsewhere"]
    admin = api(personas.admin).get("/api/projects/").json()
    assert admin["count"] == 2


def test_outsider_gets_404_for_rows_of_other_projects(personas, api):
    document = make_document(personas.project)
    claim = make_claim(document)
    outsider = api(personas.outsider)
    assert outsider.get(f"/api/projects/{personas.project.pk}/").status_code == 404
    assert outsider.get(f"/api/documents/{document.pk}/").status_code == 404
    assert outsider.get(f"/api/claims/{claim.pk}/").status_code == 404
    member = api(personas.annotator)
    assert member.get(f"/api/claims/{claim.pk}/").status_code == 200


def _upload(client, url, project, field="file"):
    return client.post(
        url,
        {"project": project.pk, field: SimpleUploadedFile("x.jsonl", b"")},
        format="multipart",
    )


def test_annotator_cannot_use_admin_only_endpoints(personas, api):
    client, project = api(personas.annotator), personas.project
    assert (
        _upload(client, "/api/documents/upload/", project, "files").status_code == 403
    )
    assert _upload(client, "/api/claims/import/", project).status_code == 403
    assert _upload(client, "/api/labels/import/", project).status_code == 403
    assert client.get(f"/api/projects/{project.pk}/export/").status_code == 403
    assert client.post(f"/api/projects/{project.pk}/check/").status_code == 403
    response = client.post(
        "/api/extraction-runs/", {"project": project.pk, "model": "m"}, format="json"
    )
    assert response.status_code == 403
    # Scorers and training runs list the projects you administer: none.
    assert client.get("/api/scorer-models/").json()["results"] == []
    assert client.get("/api/training-runs/").json()["results"] == []
    assert (
        client.post("/api/projects/", {"name": "mine"}, format="json").status_code
        == 403
    )
    response = client.patch(
        f"/api/projects/{project.pk}/", {"nli_threshold": 0.1}, format="json"
    )
    assert response.status_code == 403


def test_annotator_labels_a_claim_once_per_client_id(personas, api):
    claim = make_claim(make_document(personas.project))
    client = api(personas.annotator)
    body = {
        "claim": claim.pk,
        "label": "unsafe",
        "note": "wrong city",
        "seconds_spent": 4.5,
        "client_id": "0b0e7a52-6f1e-4f8e-9a51-5a3c6a0d2c11",
    }
    first = client.post("/api/labels/", body, format="json")
    assert first.status_code == 201, first.content
    retry = client.post("/api/labels/", body, format="json")
    assert retry.status_code == 200
    assert retry.json()["id"] == first.json()["id"]
    assert first.json()["annotator"] == "ann1"
    # The other annotator can neither see nor change it, and the outsider
    # cannot label.
    other = api(personas.annotator2).patch(
        f"/api/labels/{first.json()['id']}/", {"label": "safe"}, format="json"
    )
    assert other.status_code == 404
    outsider = api(personas.outsider).post(
        "/api/labels/", {**body, "client_id": None}, format="json"
    )
    assert outsider.status_code == 400


def test_token_endpoint_and_schema(personas, api):
    response = api().post(
        "/api/auth/token/", {"username": "ann1", "password": "ann1-pass"}, format="json"
    )
    assert response.status_code == 200
    token = response.json()["token"]
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    schema = client.get("/api/schema/?format=json")
    assert schema.status_code == 200
    paths = schema.json()["paths"]
    assert "/api/claims/" in paths and "/api/documents/upload/" in paths
    assert client.get("/api/docs/").status_code == 200


def test_a_threshold_changed_through_the_api_has_every_claim_checked_again(
    personas, api
):
    from django.utils import timezone

    project = personas.project
    claim = make_claim(
        make_document(project), verdict="unsafe", checked_at=timezone.now()
    )
    client = api(personas.admin)
    url = f"/api/projects/{project.pk}/"
    assert client.patch(url, {"description": "d"}, format="json").status_code == 200
    claim.refresh_from_db()
    assert claim.checked_at is not None
    reply = client.patch(url, {"options": {"align_threshold": 0.7}}, format="json")
    assert (reply.status_code, reply.json()["options"]["align_threshold"]) == (200, 0.7)
    claim.refresh_from_db()
    assert (claim.checked_at, claim.verdict) == (None, "unsafe")

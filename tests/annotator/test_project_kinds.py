"""A project's kind picks its checker; every kind the app offers has one."""

import pytest

from annotator.models import Project
from pipeline.checkers import checker_class

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("kind", Project.Kind.values)
def test_every_kind_the_app_offers_is_a_registered_checker(kind):
    assert checker_class(kind).kind == kind


def test_a_project_is_created_with_a_kind_and_keeps_it(personas, api):
    admin = api(personas.admin)
    response = admin.post("/api/projects/", {"name": "briefs"}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["kind"] == "extraction"
    url = f"/api/projects/{response.json()['id']}/"
    assert admin.patch(url, {"description": "x"}, format="json").status_code == 200

    response = admin.post(
        "/api/projects/", {"name": "tarot", "kind": "tarot"}, format="json"
    )
    assert response.status_code == 400
    assert "kind" in response.json()


def test_changing_a_kind_is_refused(personas, api, monkeypatch):
    project = personas.project
    monkeypatch.setattr(
        Project._meta.get_field("kind"),
        "choices",
        [*Project.Kind.choices, ("echo-test", "A second kind")],
    )
    response = api(personas.admin).patch(
        f"/api/projects/{project.pk}/", {"kind": "echo-test"}, format="json"
    )
    assert response.status_code == 400
    assert "chosen when it is created" in str(response.json()["kind"])
    project.refresh_from_db()
    assert project.kind == "extraction"

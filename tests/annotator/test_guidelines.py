"""Labeling guidelines: versions, the safe renderer, sections by type, and the
version each label records."""

import uuid

import pytest
from django.core.exceptions import PermissionDenied

from annotator.core.errors import GuidelineInvalid, LabelInvalid
from annotator.labeling import guidelines, labels
from annotator.models import Guideline, Label, Membership, Role
from annotator.projects import access
from tests.annotator.factories import make_claim, make_document

GUIDE = """# Labeling guide

Read the whole decision before you judge.

## Hearing Date

The date the hearing took place, not the date of the decision.

### Examples

- "heard on 17 January 2012": 2012-01-17

## `GPE`

A country, city or region *named* in the decision.

## Response block

A sentence of the answer.
"""


def _project_admin(personas):
    """A member of the project with the admin role (not a superuser)."""
    Membership.objects.filter(
        user=personas.annotator2, project=personas.project
    ).update(role=Role.ADMIN)
    return personas.annotator2


def _labels(client, project, **label):
    response = client.post(
        f"/api/projects/{project.pk}/labels/",
        {"labels": [{"client_id": str(uuid.uuid4()), "label": "safe", **label}]},
        format="json",
    )
    assert response.status_code == 200, response.content
    return response.json()["results"][0]


# --- versions ----------------------------------------------------------------


def test_each_changed_save_is_a_new_version_and_identical_text_is_not(personas):
    project, admin = personas.project, _project_admin(personas)
    first, created = guidelines.guideline_save(project=project, user=admin, text="v1")
    assert (first.version, created, first.created_by) == (1, True, admin)
    second, created = guidelines.guideline_save(project=project, user=admin, text="v2")
    assert (second.version, created) == (2, True)
    # The same text again, as a browser's textarea sends it (CRLF, a trailing
    # newline): no new version.
    again, created = guidelines.guideline_save(
        project=project, user=admin, text="v2\r\n"
    )
    assert (again.pk, created) == (second.pk, False)
    assert list(project.guidelines.values_list("version", flat=True)) == [2, 1]
    assert guidelines.guideline_latest(project).text == "v2"
    assert guidelines.guideline_get(project, 1).text == "v1"
    assert guidelines.guideline_get(project, 3) is None
    # Saving an old text again makes it the newest version.
    back, created = guidelines.guideline_save(project=project, user=admin, text="v1")
    assert (back.version, created) == (3, True)


def test_versions_are_numbered_per_project(personas):
    from tests.annotator.factories import make_project

    other = make_project(name="other")
    guidelines.guideline_save(project=personas.project, user=personas.admin, text="a")
    saved, _ = guidelines.guideline_save(project=other, user=personas.admin, text="b")
    assert saved.version == 1


def test_only_the_projects_admins_save_a_guideline(personas):
    project = personas.project
    for user in (personas.annotator, personas.outsider):
        with pytest.raises(PermissionDenied, match="needs the role admin"):
            guidelines.guideline_save(project=project, user=user, text="mine")
    Membership.objects.filter(user=personas.annotator, project=project).update(
        role=Role.REVIEWER
    )
    with pytest.raises(PermissionDenied):
        guidelines.guideline_save(project=project, user=personas.annotator, text="x")
    assert not Guideline.objects.exists()
    guidelines.guideline_save(project=project, user=_project_admin(personas), text="x")
    assert Guideline.objects.count() == 1


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "the guideline is empty"),
        ("  \n\t\n", "the guideline is empty"),
        ("nul\x00here", "contains a NUL character"),
        ("x" * (guidelines.GUIDELINE_MAX_CHARS + 1), "over the limit of 100000"),
        (["a list"], "must be text"),
    ],
)
def test_bad_guideline_text_is_refused_by_name(personas, text, message):
    with pytest.raises(GuidelineInvalid, match=message):
        guidelines.guideline_save(
            project=personas.project, user=personas.admin, text=text
        )
    assert not Guideline.objects.exists()


# --- rendering -----------------------------------------------------------------


def test_raw_html_and_script_links_are_neutralised():
    html = guidelines.guideline_render(
        "Hi <script>alert(1)</script> <img src=x onerror=alert(2)>\n\n"
        "<div onclick='alert(3)'>block</div>\n\n"
        "[bad](javascript:alert(4)) [upper](JavaScript:alert(5)) "
        "[entity](&#106;avascript:alert(6)) <javascript:alert(7)> "
        "[data](data:text/html,<b>x</b>) [vb](vbscript:msgbox) "
        "[web](https://example.org/guide) [mail](mailto:lead@example.org) "
        "<http://example.org/auto>"
    ).html
    assert "<script" not in html and "<img" not in html and "<div" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # shown as text
    lowered = html.lower()
    # The refused links stay as their source text, never as a link.
    assert "[bad](javascript:alert(4))" in html
    for scheme in ("javascript:", "data:", "vbscript:"):
        assert f'href="{scheme}' not in lowered
    assert 'href="https://example.org/guide"' in html
    assert 'href="mailto:lead@example.org"' in html
    assert 'href="http://example.org/auto"' in html
    assert html.count("<a ") == 3
    assert 'rel="noopener noreferrer"' in html


def test_markdown_renders_headings_lists_emphasis_and_tables():
    html = guidelines.guideline_render(
        "# Title\n\n- *one*\n- **two**\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    ).html
    assert "<h1>Title</h1>" in html
    assert "<em>one</em>" in html and "<strong>two</strong>" in html
    assert "<table>" in html and "<td>1</td>" in html


def test_sections_are_found_by_type_name_or_display_name_in_any_case():
    rendered = guidelines.guideline_render(GUIDE)
    assert [(s["heading"], s["level"]) for s in rendered.sections] == [
        ("Labeling guide", 1),
        ("Hearing Date", 2),
        ("Examples", 3),
        ("GPE", 2),
        ("Response block", 2),
    ]
    by_key = {}
    for section in guidelines.guideline_render(GUIDE).sections:
        by_key.setdefault(section["key"], section["html"])

    def shown(type_name: str, display_name: str = "") -> str:
        keys = guidelines.section_keys(type_name, display_name)
        return next((by_key[k] for k in keys if k in by_key), "")

    # By display name (the schema's, or the humanised type name).
    hearing = shown("HearingDate", "Hearing Date")
    assert "not the date of the decision" in hearing
    assert "2012-01-17" in hearing  # its sub-sections belong to it
    assert "A country" not in hearing  # the next section of its level does not
    # By raw type name, the heading in code and in another case.
    assert "<em>named</em>" in shown("gpe")
    # A claim kind's type, case and spacing ignored.
    assert "A sentence" in shown("response_block", "Response  BLOCK")
    assert shown("JudgeName") == ""


def test_the_labeling_page_carries_the_latest_version_and_its_sections(
    personas, client
):
    project = personas.project
    make_claim(make_document(project), type="HearingDate", value="2012-01-17")
    guidelines.guideline_save(project=project, user=personas.admin, text="old")
    guidelines.guideline_save(project=project, user=personas.admin, text=GUIDE)
    client.force_login(personas.annotator)
    response = client.get(f"/projects/{project.pk}/label/")
    assert response.status_code == 200
    data = response.context["data"]["guideline"]
    assert data["version"] == 2
    assert "<h2>Hearing Date</h2>" in data["html"]
    keys = [s["key"] for s in data["sections"]]
    assert "hearing date" in keys and "gpe" in keys
    item = response.context["data"]["items"][0]
    assert item["type_display"].lower() in keys


# --- labels record the version ---------------------------------------------------


def test_a_label_records_the_version_sent(personas, api):
    project = personas.project
    claim = make_claim(make_document(project))
    guidelines.guideline_save(project=project, user=personas.admin, text="one")
    guidelines.guideline_save(project=project, user=personas.admin, text="two")
    result = _labels(
        api(personas.annotator), project, claim=claim.pk, guideline_version=1
    )
    assert result["status"] == "created", result
    assert Label.objects.get(pk=result["id"]).guideline_version == 1


def test_a_label_without_a_version_records_the_latest(personas, api):
    project = personas.project
    first, second = (make_claim(make_document(project)) for _ in range(2))
    expert = api(personas.annotator)
    # No guideline yet: nothing to record.
    result = _labels(expert, project, claim=first.pk)
    assert Label.objects.get(pk=result["id"]).guideline_version is None
    guidelines.guideline_save(project=project, user=personas.admin, text="one")
    guidelines.guideline_save(project=project, user=personas.admin, text="two")
    result = _labels(expert, project, claim=second.pk, guideline_version=None)
    assert Label.objects.get(pk=result["id"]).guideline_version == 2
    # The REST endpoint for API clients: the latest too, and shown back.
    response = api(personas.annotator2).post(
        "/api/labels/", {"claim": first.pk, "label": "unsafe"}, format="json"
    )
    assert response.status_code == 201, response.content
    assert response.json()["guideline_version"] == 2


def test_a_version_the_project_does_not_have_is_refused(personas, api):
    from tests.annotator.factories import make_project

    project = personas.project
    claim = make_claim(make_document(project))
    guidelines.guideline_save(project=project, user=personas.admin, text="one")
    # Version 2 exists, but of another project.
    other = make_project(name="other")
    for text in ("a", "b"):
        guidelines.guideline_save(project=other, user=personas.admin, text=text)
    expert = api(personas.annotator)
    result = _labels(expert, project, claim=claim.pk, guideline_version=2)
    assert result["status"] == "error"
    assert result["error"] == (
        "guideline_version: the project has no guideline version 2"
    )
    result = _labels(expert, project, claim=claim.pk, guideline_version=0)
    assert result["status"] == "error" and "guideline_version" in result["error"]
    response = expert.post(
        "/api/labels/",
        {"claim": claim.pk, "label": "safe", "guideline_version": 7},
        format="json",
    )
    assert response.status_code == 400
    assert response.json() == {
        "detail": "guideline_version: the project has no guideline version 7"
    }
    assert not Label.objects.exists()
    with pytest.raises(LabelInvalid, match="no guideline version 9"):
        labels.label_submit(
            claim=claim,
            annotator=personas.annotator,
            label="safe",
            guideline_version=9,
        )


def test_changing_a_label_records_the_version_of_the_change(personas, api):
    project = personas.project
    claim = make_claim(make_document(project))
    guidelines.guideline_save(project=project, user=personas.admin, text="one")
    expert = api(personas.annotator)
    created = expert.post(
        "/api/labels/",
        {"claim": claim.pk, "label": "safe", "guideline_version": 1},
        format="json",
    ).json()
    guidelines.guideline_save(project=project, user=personas.admin, text="two")
    url = f"/api/labels/{created['id']}/"
    response = expert.patch(url, {"guideline_version": 3}, format="json")
    assert response.status_code == 400
    assert "no guideline version 3" in response.json()["detail"]
    assert Label.objects.get().guideline_version == 1
    response = expert.patch(url, {"label": "unsafe"}, format="json")
    assert response.status_code == 200, response.content
    assert (response.json()["label"], response.json()["guideline_version"]) == (
        "unsafe",
        2,
    )
    response = expert.patch(url, {"guideline_version": 1}, format="json")
    assert response.json()["guideline_version"] == 1


# --- the API and the page ---------------------------------------------------------


def test_api_reads_the_latest_or_an_older_version_and_admins_save(personas, api):
    project = personas.project
    url = f"/api/projects/{project.pk}/guideline/"
    admin = api(_project_admin(personas))
    expert = api(personas.annotator)
    response = expert.get(url)
    assert response.status_code == 404
    assert response.json()["detail"] == "the project has no guideline yet"

    response = admin.post(url, {"text": "# Old\n"}, format="json")
    assert response.status_code == 201, response.content
    response = admin.post(url, {"text": GUIDE}, format="json")
    assert response.status_code == 201
    body = response.json()
    assert body["version"] == 2 and body["versions"] == [2, 1]
    assert admin.post(url, {"text": GUIDE}, format="json").status_code == 200

    latest = expert.get(url).json()
    assert latest["version"] == 2 and latest["text"] == GUIDE.rstrip()
    assert "<h2>Hearing Date</h2>" in latest["html"]
    assert {"heading": "GPE", "key": "gpe", "level": 2} == {
        k: v for k, v in latest["sections"][3].items() if k != "html"
    }
    older = expert.get(url, {"version": 1}).json()
    assert older["version"] == 1 and older["html"] == "<h1>Old</h1>\n"
    assert expert.get(url, {"version": 5}).status_code == 404
    response = expert.get(url, {"version": "two"})
    assert response.status_code == 400 and "version" in response.json()

    response = expert.post(url, {"text": "mine"}, format="json")
    assert response.status_code == 403
    assert expert.post(url, {"text": ""}, format="json").status_code == 403
    assert "needs the role admin" in response.json()["detail"]
    response = admin.post(url, {"text": "bad\x00"}, format="json")
    assert response.status_code == 400
    assert response.json() == {"text": ["the text contains a NUL character"]}
    response = admin.post(url, {}, format="json")
    assert response.status_code == 400 and "text" in response.json()
    assert api(personas.outsider).get(url).status_code == 404
    assert project.guidelines.count() == 2


def test_the_guideline_page_previews_saves_and_lists_versions(personas, client):
    project = personas.project
    url = f"/projects/{project.pk}/guideline/"
    client.force_login(personas.annotator)
    assert client.get(url).status_code == 200  # experts read it
    response = client.post(url, {"text": "mine", "action": "save"})
    assert response.status_code == 403
    client.force_login(_project_admin(personas))
    preview = client.post(
        url, {"text": "## GPE\n<script>alert(1)</script>", "action": "preview"}
    )
    assert preview.status_code == 200
    page = preview.content.decode()
    assert "<h2>GPE</h2>" in page and "<script>alert(1)" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert not project.guidelines.exists()
    response = client.post(url, {"text": "## GPE\r\nA place.", "action": "save"})
    assert response.status_code == 302
    page = client.get(response["Location"]).content.decode()
    assert "Saved as version 1" in page and "<p>A place.</p>" in page
    response = client.post(url, {"text": "", "action": "save"})
    assert response.status_code == 400
    assert "the guideline is empty" in response.content.decode()
    client.post(url, {"text": "second", "action": "save"})
    old = client.get(url, {"version": 1}).content.decode()
    assert "an older version" in old and "<p>A place.</p>" in old
    assert client.get(url, {"version": 9}).status_code == 404
    client.force_login(personas.outsider)
    assert client.get(url).status_code == 404


def test_the_dashboard_links_the_guideline_page(personas, client):
    client.force_login(personas.admin)
    page = client.get(f"/projects/{personas.project.pk}/dashboard/").content.decode()
    assert f'href="/projects/{personas.project.pk}/guideline/"' in page
    assert access.project_role(personas.admin, personas.project) == Role.ADMIN

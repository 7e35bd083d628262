"""The project set-up pages: create a project, upload its documents and
claims (reports line by line), add its annotators, see its checks."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from annotator.models import Claim, Document, Membership, Project, Role
from annotator.projects import services
from tests.annotator.factories import (
    DOC_TEXT,
    claims_jsonl,
    documents_jsonl,
    make_claim,
    make_document,
)

pytestmark = pytest.mark.django_db

User = get_user_model()


def _setup_url(project) -> str:
    return f"/projects/{project.pk}/setup/"


def _upload(client, project, action, *files):
    field = "files" if action == "documents" else "file"
    uploads = [SimpleUploadedFile(name, data) for name, data in files]
    return client.post(
        _setup_url(project),
        {"action": action, field: uploads if field == "files" else uploads[0]},
    )


def _report_rows(html: str) -> list[tuple[str, str, str]]:
    """(file, line, problem) of each row of the import report's table."""
    table = re.search(
        r'<table class="grid" id="report-errors">(.*?)</table>', html, re.S
    )
    if table is None:
        return []
    cells = re.findall(
        r"<tr data-line[^>]*><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td></tr>",
        table.group(1),
    )
    return [tuple(c.strip() for c in row) for row in cells]


def _summary(html: str) -> str:
    return re.search(r'<p id="report-summary">(.*?)</p>', html, re.S).group(1)


@pytest.fixture
def admin_client(personas, client):
    client.force_login(personas.admin)
    return client


@pytest.fixture
def project_admin(personas):
    """A plain user (no superuser, no model permissions) who is admin of the
    personas' project."""
    user = User.objects.create_user("padmin", password="padmin-pass")
    services.membership_set(project=personas.project, user=user, role=Role.ADMIN)
    return user


def test_creating_a_project_makes_its_creator_its_admin(personas, admin_client):
    response = admin_client.get("/")
    assert 'href="/projects/new/"' in response.content.decode()
    response = admin_client.post(
        "/projects/new/",
        {
            "name": "opinions",
            "description": "Three court opinions",
            "kind": "extraction",
        },
    )
    project = Project.objects.get(name="opinions")
    assert response.status_code == 302
    assert response["Location"] == _setup_url(project)
    assert (project.description, project.kind) == ("Three court opinions", "extraction")
    assert Membership.objects.get(project=project).user == personas.admin
    assert Membership.objects.get(project=project).role == Role.ADMIN
    page = admin_client.get(_setup_url(project)).content.decode()
    assert "No claims yet" in page


def test_a_taken_name_or_an_unknown_kind_is_refused(personas, admin_client):
    response = admin_client.post(
        "/projects/new/", {"name": "asylum", "kind": "extraction"}
    )
    assert response.status_code == 400
    assert "already exists" in response.content.decode()
    response = admin_client.post("/projects/new/", {"name": "x", "kind": "horoscope"})
    assert response.status_code == 400
    assert not Project.objects.filter(name="x").exists()


def test_creating_a_project_needs_the_add_project_permission(personas, client):
    client.force_login(personas.annotator)
    assert 'href="/projects/new/"' not in client.get("/").content.decode()
    assert client.get("/projects/new/").status_code == 403
    assert client.post("/projects/new/", {"name": "mine"}).status_code == 403
    assert not Project.objects.filter(name="mine").exists()

    personas.annotator.user_permissions.add(
        Permission.objects.get(
            codename="add_project", content_type__app_label="annotator"
        )
    )
    client.force_login(User.objects.get(pk=personas.annotator.pk))  # fresh perm cache
    response = client.post("/projects/new/", {"name": "mine", "kind": "extraction"})
    assert response.status_code == 302
    assert Membership.objects.get(project__name="mine").role == Role.ADMIN


def test_setup_page_is_for_project_admins_only(personas, client, project_admin):
    url = _setup_url(personas.project)
    assert client.get(url)["Location"].startswith("/login/")
    client.force_login(personas.outsider)
    assert client.get(url).status_code == 404
    assert client.get(url + "progress/").status_code == 404
    client.force_login(personas.annotator)  # an expert on the project
    assert client.get(url).status_code == 403
    assert client.get(url + "progress/").status_code == 403
    response = _upload(client, personas.project, "documents", ("d.txt", b"text"))
    assert response.status_code == 403
    assert not Document.objects.exists()

    client.force_login(project_admin)
    assert client.get(url).status_code == 200
    home = client.get("/").content.decode()
    assert f'href="{url}"' in home


def test_documents_upload_takes_jsonl_csv_and_text_and_reports_counts(
    personas, admin_client
):
    project = personas.project
    response = _upload(
        admin_client,
        project,
        "documents",
        ("docs.jsonl", documents_jsonl()),
        ("more.csv", f'id,text,court\nd3,"{DOC_TEXT}",IRB\n'.encode()),
        ("opinion-4.txt", b"The appellant, Mr Doe, appeals."),
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert "Documents import" in html
    assert _summary(html).startswith(
        "4 created, 0 updated, 0 unchanged: every record used"
    )
    assert _report_rows(html) == []
    assert set(project.documents.values_list("external_id", flat=True)) == {
        "d1",
        "d2",
        "d3",
        "opinion-4",
    }
    assert project.documents.get(external_id="d3").metadata == {"court": "IRB"}

    # The same files again change nothing.
    response = _upload(
        admin_client, project, "documents", ("docs.jsonl", documents_jsonl())
    )
    assert _summary(response.content.decode()).startswith(
        "0 created, 0 updated, 2 unchanged"
    )


def test_bad_claim_lines_are_reported_each_with_its_number(personas, admin_client):
    project = personas.project
    _upload(admin_client, project, "documents", ("docs.jsonl", documents_jsonl()))
    data = (
        claims_jsonl()
        + b"{not json\n"
        + b'{"id": "p-lost", "document_id": "d9", "type": "GPE", "value": "x", '
        b'"context": "x"}\n'
        + b'{"id": "p-novalue", "document_id": "d1", "type": "GPE"}\n'
    )
    response = _upload(admin_client, project, "claims", ("preds.jsonl", data))
    assert response.status_code == 200
    html = response.content.decode()
    assert "Claims import" in html
    assert _summary(html).startswith(
        "3 created, 0 updated, 0 unchanged, 3 skipped: some records skipped"
    )
    rows = _report_rows(html)
    assert [(source, line) for source, line, _ in rows] == [
        ("preds.jsonl", "4"),
        ("preds.jsonl", "5"),
        ("preds.jsonl", "6"),
    ]
    problems = {line: problem for _, line, problem in rows}
    assert problems["4"].startswith("invalid JSON")
    assert "unknown document_id &#x27;d9&#x27;" in problems["5"]
    assert "&#x27;value&#x27; is missing" in problems["6"]
    assert Claim.objects.filter(project=project).count() == 3
    # The check is under way: the page says so and polls for the rest.
    assert 'id="check-progress"' in html and 'data-pending="3"' in html
    assert "0 of 3 claims checked" in html


def test_claims_csv_with_a_bad_row(personas, admin_client):
    project = personas.project
    make_document(project, external_id="d1")
    data = (
        b"id,document_id,type,value,context,model\n"
        b"p1,d1,GPE,Toronto,took place in Toronto,gpt-x\n"
        b'p2,d1,HearingDate,"{""yyyy"": ""2012"", ""mm"": ""01"", ""dd"": ""17""}",'
        b"on 17 January 2012,gpt-x\n"
        b"p3,d1,GPE\n"
    )
    response = _upload(admin_client, project, "claims", ("preds.csv", data))
    html = response.content.decode()
    assert _summary(html).startswith("2 created")
    [(source, line, problem)] = _report_rows(html)
    assert (source, line) == ("preds.csv", "4")
    assert "3 cells, the header 6" in problem
    p2 = Claim.objects.get(project=project, external_id="p2")
    assert p2.data["value"] == {"yyyy": "2012", "mm": "01", "dd": "17"}


def test_an_upload_that_imports_nothing_answers_400(personas, admin_client):
    response = _upload(
        admin_client, personas.project, "claims", ("preds.jsonl", b"{oops\n")
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert _summary(html).startswith(
        "0 created, 0 updated, 0 unchanged, 1 skipped: nothing used"
    )
    assert _report_rows(html)[0][:2] == ("preds.jsonl", "1")

    response = _upload(admin_client, personas.project, "documents", ("empty.txt", b""))
    assert response.status_code == 400
    assert _report_rows(response.content.decode()) == [
        ("empty.txt", "whole file", "document is empty")
    ]
    response = admin_client.post(_setup_url(personas.project), {"action": "documents"})
    assert response.status_code == 400
    assert "choose a file to upload" in response.content.decode()


def test_an_upload_over_the_limit_is_refused_before_it_is_read(
    personas, admin_client, settings
):
    settings.MAX_UPLOAD_BYTES = 1000
    response = _upload(
        admin_client, personas.project, "documents", ("big.txt", b"x" * 2000)
    )
    assert response.status_code == 413
    assert "MAX_UPLOAD_BYTES" in response.content.decode()
    assert not Document.objects.exists()


def test_uploads_still_need_the_csrf_token(personas):
    client = Client(enforce_csrf_checks=True)
    client.force_login(personas.admin)
    response = _upload(client, personas.project, "documents", ("d.txt", b"some text"))
    assert response.status_code == 403
    assert not Document.objects.exists()


def test_an_existing_user_is_added_by_name_with_a_role(personas, admin_client):
    project = personas.project
    url = _setup_url(project)
    response = admin_client.post(
        url, {"action": "member", "username": "outsider", "role": "viewer"}
    )
    assert response.status_code == 200
    assert "outsider is now viewer on this project" in response.content.decode()
    assert (
        Membership.objects.get(project=project, user=personas.outsider).role == "viewer"
    )
    # Again: the role changes, no second membership.
    admin_client.post(
        url, {"action": "member", "username": "outsider", "role": "expert"}
    )
    assert (
        Membership.objects.get(project=project, user=personas.outsider).role == "expert"
    )

    response = admin_client.post(
        url, {"action": "member", "username": "nobody", "role": "expert"}
    )
    assert response.status_code == 400
    assert "no user is named &#x27;nobody&#x27;" in response.content.decode()
    response = admin_client.post(
        url, {"action": "member", "username": "ann1", "role": "owner"}
    )
    assert response.status_code == 400
    assert (
        Membership.objects.get(project=project, user=personas.annotator).role
        == "expert"
    )


def test_an_account_is_opened_with_a_password_shown_once(personas, admin_client):
    project = personas.project
    response = admin_client.post(
        _setup_url(project),
        {"action": "account", "username": "newcomer", "role": "expert"},
    )
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    html = response.content.decode()
    password = re.search(r'<code id="new-password">(.*?)</code>', html).group(1)
    assert len(password) >= 16
    user = User.objects.get(username="newcomer")
    assert password not in user.password  # stored as a hash only
    assert Membership.objects.get(project=project, user=user).role == Role.EXPERT
    assert password not in admin_client.get(_setup_url(project)).content.decode()
    fresh = Client()
    assert fresh.login(username="newcomer", password=password)
    assert fresh.get(f"/projects/{project.pk}/label/").status_code == 200

    response = admin_client.post(
        _setup_url(project),
        {"action": "account", "username": "NEWCOMER", "role": "expert"},
    )
    assert response.status_code == 400
    assert "exists already" in response.content.decode()
    response = admin_client.post(
        _setup_url(project),
        {"action": "account", "username": "no spaces!", "role": "expert"},
    )
    assert response.status_code == 400
    assert not User.objects.filter(username="no spaces!").exists()


def test_opening_accounts_needs_the_add_user_permission(
    personas, client, project_admin
):
    client.force_login(project_admin)
    url = _setup_url(personas.project)
    assert 'id="account-form"' not in client.get(url).content.decode()
    response = client.post(
        url, {"action": "account", "username": "someone", "role": "expert"}
    )
    assert response.status_code == 403
    assert not User.objects.filter(username="someone").exists()
    # Adding an existing user is a project admin's to do.
    response = client.post(
        url, {"action": "member", "username": "outsider", "role": "expert"}
    )
    assert response.status_code == 200


def test_progress_counts_each_verdict(personas, admin_client):
    project = personas.project
    document = make_document(project, external_id="d1")
    for verdict in ("safe", "unsafe", "unsafe", "unscored", ""):
        make_claim(document, verdict=verdict)
    html = admin_client.get(_setup_url(project) + "progress/").content.decode()
    counts = dict(re.findall(r'<td data-count="(\w+)">(\d+)</td>', html))
    assert counts == {
        "documents": "1",
        "claims": "5",
        "checked": "4",
        "unscored": "1",
        "safe": "1",
        "unsafe": "2",
        "unchecked": "1",
    }
    assert "4 of 5 claims checked" in html
    Claim.objects.filter(verdict="").update(verdict="safe")
    html = admin_client.get(_setup_url(project) + "progress/").content.decode()
    assert "Checks finished: all 5 claims checked" in html
    assert 'data-pending="0"' in html


def test_an_unknown_action_is_a_400(personas, admin_client):
    response = admin_client.post(_setup_url(personas.project), {"action": "drop"})
    assert response.status_code == 400

"""Bad input to the webhook API, PDF uploads and project names (issue 27):
each a clear 400 (or its file's line in the import report), never a 500,
and what was stored before is still there, unchanged."""

from __future__ import annotations

import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings

from annotator.models import Document, Project, Webhook
from tests.annotator.factories import make_document
from tests.pdfs import (
    OPINION,
    PAGE_1,
    TEXT_BOMB,
    encrypt,
    make_pdf,
    make_shared_stream_pdf,
)

pytestmark = [pytest.mark.bad_input, pytest.mark.django_db]

ALLOWED = "127.0.0.1:8123"
GOOD_URL = f"http://{ALLOWED}/hook"


@pytest.fixture
def stored(personas, api, settings):
    """One webhook registered before the bad request, and what it was."""
    settings.WEBHOOK_ALLOWED_HOSTS = [ALLOWED]
    response = api(personas.admin).post(
        "/api/webhooks/",
        {"project": personas.project.pk, "url": GOOD_URL, "events": ["check"]},
        format="json",
    )
    assert response.status_code == 201, response.content
    return Webhook.objects.values().get()


def assert_untouched(stored):
    assert list(Webhook.objects.values()) == [stored]


# --- webhooks ------------------------------------------------------------------

BAD_WEBHOOKS = {
    "no scheme": ({"url": "127.0.0.1:8123/hook"}, "http or https, not"),
    "javascript scheme": ({"url": "javascript:alert(1)"}, "not 'javascript'"),
    "file scheme": ({"url": "file:///etc/passwd"}, "not 'file'"),
    "user and password": (
        {"url": f"http://admin:hunter2@{ALLOWED}/hook"},
        "holds a user name or password",
    ),
    "IPv6 bracket left open": ({"url": "http://[::1/"}, "malformed"),
    "IPv6 bracket not an address": ({"url": "http://[abc]/"}, "malformed"),
    "IPv6 not listed": ({"url": "http://[::1]:8123/hook"}, "not allowed here"),
    "port out of range": ({"url": "http://127.0.0.1:99999/"}, "bad port"),
    "port not a number": ({"url": "http://127.0.0.1:abc/"}, "bad port"),
    "port not listed": ({"url": "http://127.0.0.1:8124/hook"}, "not allowed here"),
    "default port not listed": ({"url": "http://127.0.0.1/hook"}, "not allowed"),
    "no host": ({"url": "http://:8123/hook"}, "no host"),
    "huge URL": ({"url": GOOD_URL + "a" * 5000}, "1000 characters"),
    "NUL in URL": ({"url": GOOD_URL + "\x00x"}, "ull character"),
    "CR LF in URL": ({"url": GOOD_URL + "\r\nX-Injected: 1"}, "control characters"),
    "spaces only": ({"url": "   "}, "spaces or control characters"),
    "empty URL": ({"url": ""}, "blank"),
    "URL a list": ({"url": [GOOD_URL]}, "valid string"),
    "URL an object": ({"url": {"href": GOOD_URL}}, "valid string"),
    "unknown event": ({"url": GOOD_URL, "events": ["check", "nope"]}, "'nope'"),
    "events a string": ({"url": GOOD_URL, "events": "check"}, "list"),
    "events of objects": ({"url": GOOD_URL, "events": [{"a": 1}]}, "valid string"),
    "event name huge": ({"url": GOOD_URL, "events": ["x" * 10_000]}, "unknown"),
    "project not a number": ({"url": GOOD_URL, "project": "one"}, "valid integer"),
    "project unknown": ({"url": GOOD_URL, "project": 10**9}, ""),
}


@pytest.mark.parametrize("fields, message", BAD_WEBHOOKS.values(), ids=BAD_WEBHOOKS)
def test_a_bad_webhook_is_refused_by_name(personas, api, stored, fields, message):
    body = {"project": personas.project.pk, **fields}
    response = api(personas.admin).post("/api/webhooks/", body, format="json")
    assert response.status_code in (400, 403, 404), response.content
    assert message in response.content.decode(), response.content
    assert_untouched(stored)


BAD_CHANGES = {
    "unknown event": ({"events": ["nope"]}, "'nope'"),
    "events a string": ({"events": "check"}, "list"),
    "is_active not a boolean": ({"is_active": "maybe"}, "valid boolean"),
}


@pytest.mark.parametrize("fields, message", BAD_CHANGES.values(), ids=BAD_CHANGES)
def test_a_bad_change_to_a_webhook_is_refused(personas, api, stored, fields, message):
    url = f"/api/webhooks/{stored['id']}/"
    response = api(personas.admin).patch(url, fields, format="json")
    assert response.status_code == 400, response.content
    assert message in response.content.decode()
    assert_untouched(stored)


def test_a_secret_sent_by_the_client_is_not_used(personas, api, stored):
    body = {"project": personas.project.pk, "url": GOOD_URL, "secret": "s" * 100_000}
    response = api(personas.admin).post("/api/webhooks/", body, format="json")
    assert response.status_code == 201
    assert response.json()["secret"] != body["secret"]
    assert len(response.json()["secret"]) == 64
    assert Webhook.objects.get(pk=stored["id"]).secret == stored["secret"]


# --- PDF uploads -----------------------------------------------------------------


def _upload(client, project, *files):
    return client.post(
        "/api/documents/upload/",
        {
            "project": project.pk,
            "files": [SimpleUploadedFile(name, data) for name, data in files],
        },
        format="multipart",
    )


BAD_PDFS = {
    "truncated": (OPINION[: len(OPINION) // 2], "damaged PDF"),
    "not a PDF": (b"Dear court, a letter saved with the wrong name.", "not a PDF"),
    "empty": (b"", "not a PDF"),
    "header alone": (b"%PDF-1.4\n", "damaged PDF"),
    "encrypted": (encrypt(OPINION, user="secret"), "password is needed"),
    "zero pages": (make_pdf([]), "no extractable text on its 0 page(s)"),
    "scanned": (make_pdf([PAGE_1], scanned=True), "needs OCR"),
    "too many pages": (make_pdf([["page"]] * 4), "(PDF_MAX_PAGES)"),
    "huge text from a few kilobytes": (TEXT_BOMB, "(PDF_MAX_TEXT_CHARS)"),
    "content too large to parse": (
        make_shared_stream_pdf(b"1 2 m\n" * 600_000, pages=1),
        "PDF content is too large to read",
    ),
    "garbage after the header": (b"%PDF-1.7\n" + bytes(range(256)) * 40, "PDF"),
}


@override_settings(PDF_MAX_PAGES=3)
@pytest.mark.parametrize("data, message", BAD_PDFS.values(), ids=BAD_PDFS)
def test_a_bad_pdf_is_reported_by_name_beside_the_files_that_go_in(
    personas, api, data, message
):
    kept = make_document(personas.project, external_id="kept")
    started = time.monotonic()
    response = _upload(
        api(personas.admin),
        personas.project,
        ("bad.pdf", data),
        ("notes.txt", b"The appellant, Mr Doe, appeals."),
    )
    seconds = time.monotonic() - started
    assert response.status_code == 207, response.content
    [error] = response.json()["errors"]
    assert error["source"] == "bad.pdf"
    assert message in error["message"], error["message"]
    assert seconds < 15, seconds  # issue 27: 48.6 s for 5 kB before the budgets
    ids = set(Document.objects.values_list("external_id", flat=True))
    assert ids == {"kept", "notes"}
    assert Document.objects.get(pk=kept.pk).text == kept.text


@override_settings(PDF_READ_SECONDS=0.5, PDF_MAX_TEXT_CHARS=10**9)
def test_a_pdf_slower_to_read_than_the_budget_is_refused_with_the_setting(
    personas, api
):
    started = time.monotonic()
    response = _upload(api(personas.admin), personas.project, ("slow.pdf", TEXT_BOMB))
    assert response.status_code == 400, response.content
    [error] = response.json()["errors"]
    assert "took over 0.5 s to read" in error["message"]
    assert "(PDF_READ_SECONDS)" in error["message"]
    assert time.monotonic() - started < 0.5 + 5
    assert not Document.objects.exists()


@pytest.mark.parametrize(
    "name", ["a\x00b.pdf", "../../etc/passwd.pdf", "\r\nX-Header: 1.pdf", "é" * 300]
)
def test_an_odd_pdf_file_name_is_no_500(personas, api, name):
    response = _upload(api(personas.admin), personas.project, (name, OPINION))
    assert response.status_code in (200, 207, 400), response.content
    for document in Document.objects.all():
        assert "\x00" not in document.external_id and "/" not in document.external_id


# --- project names (a name is an export's file name) -------------------------------

BAD_NAMES = {
    "CR LF": "Appeals\r\nX-Injected: 1",
    "LF": "Appeals\nsecond line",
    "NUL": "Appeals\x00",
    "tab": "Appeals\tQ3",
    "line separator": "Appeals\u2028Q3",
    "right-to-left override": "Appeals\u202efdp.exe",
}


@pytest.mark.parametrize("name", BAD_NAMES.values(), ids=BAD_NAMES)
def test_a_project_name_with_control_characters_is_refused(personas, api, name):
    admin = api(personas.admin)
    before = Project.objects.get(pk=personas.project.pk).name
    changed = admin.patch(
        f"/api/projects/{personas.project.pk}/", {"name": name}, format="json"
    )
    assert changed.status_code == 400, changed.content
    assert "name" in changed.json()
    assert Project.objects.get(pk=personas.project.pk).name == before


def test_a_stored_name_with_cr_lf_exports_under_a_safe_file_name(personas, api):
    # Stored before names were checked: the export must still answer.
    Project.objects.filter(pk=personas.project.pk).update(
        name='Appeals\r\nSet-Cookie: x=1 "q"/..'
    )
    make_document(personas.project, external_id="d1")
    response = api(personas.admin).get(
        f"/api/projects/{personas.project.pk}/export/", {"kind": "documents"}
    )
    assert response.status_code == 200
    header = response["Content-Disposition"]
    assert (
        header
        == 'attachment; filename="Appeals__Set-Cookie: x=1 _q__..-documents.jsonl"'
    )
    assert b"d1" in b"".join(response.streaming_content)

"""A newcomer's first day (issue 11): an admin creates a project, uploads its
documents and claims, opens an account for an annotator and watches the
checks finish; the annotator logs in, sees why an item is in front of them,
labels it, and the label is stored."""

import json

import pytest

from annotator.labeling import handout
from annotator.models import Claim, Label, Project
from tests.annotator.factories import DOC_TEXT, jsonl
from tests.browser.conftest import log_in, wait_all_sent
from tests.conftest import wait_for

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DOCUMENTS = jsonl(
    {"id": "opinion-1", "text": DOC_TEXT},
    {"id": "opinion-2", "text": "The appeal was dismissed by Judge Ann Lee."},
)
_CLAIMS = [
    {
        "id": "p-city",
        "document_id": "opinion-1",
        "type": "GPE",
        "value": "Toronto",
        "context": "The hearing took place in Toronto",
    },
    {
        "id": "p-judge",
        "document_id": "opinion-2",
        "type": "JudgeName",
        "value": "Ann Lee",
        "context": "dismissed by Judge Ann Lee",
    },
    {
        "id": "p-invented",
        "document_id": "opinion-1",
        "type": "GPE",
        "value": "Montreal",
        "context": "the appeal was heard in Montreal by a panel of three",
    },
]
# Line 3 is broken: the report names it, the other three lines go in.
CLAIMS = (
    jsonl(*_CLAIMS[:2]) + b'{"id": "p-broken", "document_id": \n' + jsonl(_CLAIMS[2])
)


def _file(name: str, data: bytes) -> dict:
    return {"name": name, "mimeType": "application/octet-stream", "buffer": data}


def _csp_watch(page, refused: list[str]) -> None:
    """Collects what the Content-Security-Policy blocks on ``page``."""
    page.on(
        "console",
        lambda m: (
            refused.append(m.text) if "Content Security Policy" in m.text else None
        ),
    )


def test_newcomer_sets_up_a_project_and_an_annotator_labels_it(
    personas, new_page, artifacts, celery_worker
):
    refused: list[str] = []
    admin = new_page()
    _csp_watch(admin, refused)
    log_in(admin, "admin", "admin-pass")
    admin.goto("/")
    admin.click("#new-project")
    admin.fill("input[name=name]", "opinions")
    admin.fill("textarea[name=description]", "Three court opinions, first look")
    admin.click("text=Create the project")
    admin.wait_for_url("**/setup/")
    project = Project.objects.get(name="opinions")
    # The packaged scorer the worker loads is untrained (arbitrary scores):
    # threshold 0 leaves the verdicts to the alignment.
    Project.objects.filter(pk=project.pk).update(nli_threshold=0.0)

    admin.set_input_files(
        "#documents input[type=file]", [_file("opinions.jsonl", DOCUMENTS)]
    )
    admin.click("text=Upload documents")
    admin.wait_for_selector("#import-report")
    assert admin.text_content("#import-report h2") == "Documents import"
    assert admin.text_content("#report-summary").startswith("2 created, 0 updated")

    # The annotator has no account yet: one is opened here.
    admin.fill("#account-form input[name=username]", "newcomer")
    admin.select_option("#account-form select[name=role]", "expert")
    admin.click("text=Open an account")
    admin.wait_for_selector("#new-account")
    password = admin.text_content("#new-password").strip()
    assert admin.locator(".setup-members td", has_text="newcomer").count() == 1

    admin.set_input_files(
        "#claims-upload input[type=file]",
        [_file("claims.jsonl", CLAIMS)],
    )
    admin.click("text=Upload claims")
    admin.wait_for_selector("#import-report h2:text('Claims import')")
    assert admin.text_content("#report-summary").startswith(
        "3 created, 0 updated, 0 unchanged, 1 skipped"
    )
    bad = admin.locator("#report-errors tbody tr")
    assert bad.count() == 1
    assert bad.locator("td").all_text_contents()[:2] == ["claims.jsonl", "3"]
    assert "invalid JSON" in bad.locator("td").nth(2).text_content()
    admin.screenshot(path=str(artifacts / "newcomer-import-report.png"), full_page=True)

    # The checks finish; the page, left open on the upload's report, follows
    # them without a reload.
    wait_for(
        lambda: not Claim.objects.filter(project=project, verdict="").exists(),
        timeout=120,
        worker=celery_worker,
    )
    admin.wait_for_selector(
        "#check-status:text('Checks finished: all 3 claims checked')",
        timeout=60_000,
    )
    assert admin.text_content("[data-count=checked]") == "3"
    assert admin.text_content("[data-count=unchecked]") == "0"
    invented = Claim.objects.get(project=project, external_id="p-invented")
    assert invented.verdict == "unsafe"
    assert admin.is_visible("#import-report")
    admin.screenshot(path=str(artifacts / "newcomer-setup.png"), full_page=True)

    annotator = new_page()
    _csp_watch(annotator, refused)
    log_in(annotator, "newcomer", password)
    annotator.goto("/")
    annotator.get_by_role("row", name="opinions").get_by_role(
        "link", name="Label"
    ).click()
    annotator.wait_for_selector("#item:not([hidden])")
    shown = int(annotator.get_attribute("#item", "data-claim-id"))
    user = project.memberships.get(user__username="newcomer").user
    [item] = handout.labeling_items(project=project, annotator=user, ids=[shown])
    assert annotator.is_visible("#why")
    assert annotator.text_content("#why") == f"Why this item: {item['why']['text']}"
    data = json.loads(annotator.text_content("#label-data"))
    assert data["user"]["name"] == "newcomer"
    annotator.screenshot(path=str(artifacts / "newcomer-label.png"), full_page=True)

    annotator.click("button[data-action=safe]")
    wait_all_sent(annotator)
    label = Label.objects.get(claim_id=shown, annotator=user)
    assert label.label == "safe"
    assert label.claim.project_id == project.pk
    assert refused == []

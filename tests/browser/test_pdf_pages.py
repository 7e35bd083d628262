"""A PDF opinion in the browser: the admin uploads it on the set-up page
beside a PDF that is not one (reported by name), its claims are checked,
and the expert's labeling screen names the evidence's page and shows that
page's text around it."""

import io

import pytest

from annotator.claims import ingest
from annotator.claims.checking import claims_check
from annotator.models import Document
from tests.annotator.factories import jsonl, make_project, score_by_word_overlap
from tests.browser.conftest import log_in
from tests.pdfs import FILLER, OPINION, PAGE_2

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CONTEXT = "The appeal was heard in Toronto on 3 May 2019"


def _file(name: str, data: bytes) -> dict:
    return {"name": name, "mimeType": "application/pdf", "buffer": data}


def test_the_expert_sees_the_page_of_the_evidence_and_its_text(
    personas, new_page, monkeypatch, unread_broker, artifacts
):
    project = make_project(name="opinions", members=[personas.annotator])
    admin = new_page()
    log_in(admin, "admin", "admin-pass")
    admin.goto(f"/projects/{project.pk}/setup/")
    admin.set_input_files(
        "#documents input[type=file]",
        [_file("opinion.pdf", OPINION), _file("scan.pdf", b"not a PDF at all")],
    )
    admin.click("text=Upload documents")
    admin.wait_for_selector("#import-report")
    assert admin.text_content("#report-summary").startswith(
        "1 created, 0 updated, 0 unchanged, 1 skipped"
    )
    cells = admin.locator("#report-errors tbody tr td").all_text_contents()
    assert cells[:2] == ["scan.pdf", "whole file"]
    assert cells[2].startswith("not a PDF")
    assert Document.objects.get(project=project).external_id == "opinion"

    ingest.claims_import(
        project=project,
        stream=io.BytesIO(
            jsonl(
                {
                    "id": "p-city",
                    "document_id": "opinion",
                    "type": "GPE",
                    "value": "Toronto",
                    "context": CONTEXT,
                }
            )
        ),
    )
    score_by_word_overlap(monkeypatch)
    claims_check(project_id=project.pk)

    page = new_page()
    log_in(page, "ann1", "ann1-pass")
    page.goto(f"/projects/{project.pk}/label/")
    page.wait_for_selector("#item:not([hidden])")
    # Beside the aligned span, its page; above the document, the page shown.
    assert page.text_content("#claim .ev-page").strip() == "p. 2"
    assert page.text_content("#doc-pages") == "p. 2 of 3"
    shown = page.text_content("#doc")
    assert PAGE_2[1] in shown and FILLER not in shown
    assert page.text_content("#doc .d-hit") == CONTEXT
    page.screenshot(path=str(artifacts / "label-pdf-page.png"), full_page=True)

    # Expanded, the whole document: every page.
    page.keyboard.press("e")
    page.wait_for_function(
        "() => document.querySelector('#doc-pages').textContent === 'all 3 pages'"
    )
    assert FILLER in page.text_content("#doc")

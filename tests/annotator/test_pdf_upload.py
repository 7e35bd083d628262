"""PDF uploads: a brief or opinion uploaded as a PDF keeps its pages, bad
PDFs are reported by name beside the files that go in, and the evidence the
check finds in a PDF names its page on the labeling screen and in the API."""

import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import override_settings

from annotator.claims import ingest
from annotator.claims.checking import claims_check
from annotator.labeling import handout
from annotator.models import Claim, Document
from tests.annotator.factories import (
    jsonl,
    make_claim,
    make_document,
    make_project,
    score_by_word_overlap,
)
from tests.citation_data import write_caselaw
from tests.pdfs import FILLER, OPINION, PAGE_1, PAGE_2, PAGE_3, encrypt, make_pdf

pytestmark = pytest.mark.django_db


def _upload(client, project, *files):
    return client.post(
        "/api/documents/upload/",
        {
            "project": project.pk,
            "files": [SimpleUploadedFile(name, data) for name, data in files],
        },
        format="multipart",
    )


def _import_claims(client, project, *rows):
    response = client.post(
        "/api/claims/import/",
        {
            "project": project.pk,
            "file": SimpleUploadedFile("claims.jsonl", jsonl(*rows)),
        },
        format="multipart",
    )
    assert response.status_code == 200, response.content
    return response


def _checked_item(personas, api, monkeypatch, context):
    """The opinion uploaded over the API, one claim quoting ``context``
    imported and checked: its labeling item."""
    project, client = personas.project, api(personas.admin)
    assert _upload(client, project, ("opinion.pdf", OPINION)).status_code == 200
    _import_claims(
        client,
        project,
        {
            "id": "p-city",
            "document_id": "opinion",
            "type": "GPE",
            "value": "Toronto",
            "context": context,
        },
    )
    score_by_word_overlap(monkeypatch)
    assert claims_check(project_id=project.pk).checked == 1
    claim = Claim.objects.get(external_id="p-city")
    [item] = handout.labeling_items(
        project=project, annotator=personas.annotator, ids=[claim.pk]
    )
    return claim, item


def test_a_pdf_uploads_over_the_api_as_one_document_with_its_pages(personas, api):
    response = _upload(api(personas.admin), personas.project, ("opinion.pdf", OPINION))
    assert response.status_code == 200, response.content
    assert response.json()["created"] == 1
    document = Document.objects.get(project=personas.project)
    assert document.external_id == "opinion"
    pages = document.metadata["pages"]
    assert document.metadata["filename"] == "opinion.pdf"
    assert [p["page"] for p in pages] == [1, 2, 3]
    for page, lines in zip(pages, [PAGE_1, PAGE_2, PAGE_3], strict=True):
        assert document.text[page["start"] : page["end"]] == "\n".join(lines)

    # The same PDF again changes nothing.
    again = _upload(api(personas.admin), personas.project, ("opinion.pdf", OPINION))
    assert (again.json()["created"], again.json()["unchanged"]) == (0, 1)


def test_bad_pdfs_are_reported_by_name_and_the_rest_of_the_upload_goes_in(
    personas, api
):
    response = _upload(
        api(personas.admin),
        personas.project,
        ("opinion.pdf", OPINION),
        ("scanned.pdf", make_pdf([PAGE_1, PAGE_2], scanned=True)),
        ("locked.pdf", encrypt(OPINION, user="secret")),
        ("brief.pdf", b"Dear court, this is a letter saved with the wrong name."),
        ("truncated.pdf", OPINION[: len(OPINION) // 2]),
        ("notes.txt", b"The appellant, Mr Doe, appeals."),
    )
    assert response.status_code == 207, response.content
    body = response.json()
    assert body["created"] == 2
    problems = {e["source"]: e["message"] for e in body["errors"]}
    assert all(e["line"] is None for e in body["errors"])
    assert set(problems) == {"scanned.pdf", "locked.pdf", "brief.pdf", "truncated.pdf"}
    assert "no extractable text" in problems["scanned.pdf"]
    assert "OCR" in problems["scanned.pdf"]
    assert "password is needed" in problems["locked.pdf"]
    assert problems["brief.pdf"].startswith("not a PDF")
    assert problems["truncated.pdf"].startswith("damaged PDF")
    assert set(
        Document.objects.filter(project=personas.project).values_list(
            "external_id", flat=True
        )
    ) == {"opinion", "notes"}


def test_a_pdf_is_known_by_its_header_whatever_its_name(personas):
    report = ingest.documents_import(
        project=personas.project,
        files=[("scan-0042", io.BytesIO(OPINION))],
    )
    assert (report.created, report.errors) == (1, [])
    document = Document.objects.get(project=personas.project)
    assert document.external_id == "scan-0042"
    assert len(document.metadata["pages"]) == 3
    # A text that only mentions the header further on stays a text.
    text = b"Saved files begin with %PDF-1.4 and a binary line."
    report = ingest.documents_import(
        project=personas.project, files=[("about.txt", io.BytesIO(text))]
    )
    assert report.created == 1
    assert Document.objects.get(external_id="about").text == text.decode()


@override_settings(PDF_MAX_PAGES=2)
def test_a_pdf_over_the_page_limit_is_reported_with_the_setting(personas, api):
    response = _upload(api(personas.admin), personas.project, ("opinion.pdf", OPINION))
    assert response.status_code == 400, response.content
    [error] = response.json()["errors"]
    assert error["source"] == "opinion.pdf"
    assert "3 pages, over the limit of 2" in error["message"]
    assert not Document.objects.filter(project=personas.project).exists()


def test_a_project_of_items_refuses_a_pdf_by_name(personas):
    project = make_project(kind="provenance")
    report = ingest.documents_import(
        project=project, files=[("opinion.pdf", io.BytesIO(OPINION))]
    )
    [error] = report.errors
    assert error.source == "opinion.pdf"
    assert "items" in error.message
    assert not project.documents.exists()


def test_evidence_on_page_2_names_its_page_and_the_window_keeps_to_it(
    personas, api, monkeypatch
):
    claim, item = _checked_item(
        personas, api, monkeypatch, "The appeal was heard in Toronto on 3 May 2019"
    )
    document = claim.document
    page_2 = document.metadata["pages"][1]
    [evidence] = item["evidence"]
    assert evidence["source"] == "opinion"
    assert page_2["start"] <= evidence["start"] < evidence["end"] <= page_2["end"]
    assert (evidence["page"], evidence["page_label"]) == (2, "p. 2")
    assert "pages" not in evidence

    window = item["document"]
    assert (window["pages"], window["page_label"], window["page_count"]) == (
        [2],
        "p. 2",
        3,
    )
    # The page's text around the evidence, and nothing of pages 1 and 3,
    # which an ordinary window of this size would show.
    assert window["window_start"] == page_2["start"]
    assert window["window_text"] == "\n".join(PAGE_2)
    assert FILLER not in window["window_text"]

    # The API's claims carry the page too.
    rows = (
        api(personas.admin)
        .get(f"/api/claims/?project={personas.project.pk}")
        .json()["results"]
    )
    [row] = rows
    assert (row["evidence"][0]["page"], row["evidence"][0]["page_label"]) == (2, "p. 2")


def test_evidence_across_a_page_break_names_both_pages(personas, api, monkeypatch):
    _, item = _checked_item(
        personas,
        api,
        monkeypatch,
        f"8. {FILLER}\n\nThe appeal was heard in Toronto on 3 May 2019",
    )
    [evidence] = item["evidence"]
    assert (evidence["pages"], evidence["page_label"]) == ([1, 2], "pp. 1\u20132")
    assert "page" not in evidence
    window = item["document"]
    assert window["pages"] == [1, 2]
    assert window["page_label"] == "pp. 1\u20132"
    assert "The appeal was heard in Toronto" in window["window_text"]
    assert "Appeal dismissed." not in window["window_text"]  # page 3
    assert "9. The tribunal" not in window["window_text"]


def test_documents_without_pages_and_evidence_elsewhere_are_left_alone(personas):
    project = personas.project
    plain = make_document(project, external_id="plain")
    # A page table written by hand that is not one (it runs past the text).
    bogus = make_document(
        project,
        external_id="bogus",
        metadata={"pages": [{"page": 1, "start": 0, "end": 10**6}]},
    )
    paged = make_document(
        project,
        external_id="paged",
        text="First page.\n\nSecond page.",
        metadata={
            "pages": [
                {"page": 1, "start": 0, "end": 11},
                {"page": 2, "start": 13, "end": 25},
            ]
        },
    )
    evidence = [
        dict(source=d.external_id, start=0, end=5, text="x", role="aligned", score=1.0)
        for d in (plain, bogus)
    ]
    # Evidence from another source (a case-law opinion) beside the document's.
    elsewhere = dict(
        source="opinion-9", start=13, end=20, text="x", role="opinion", score=None
    )
    ids = [
        make_claim(plain, evidence=[evidence[0]]).pk,
        make_claim(bogus, evidence=[evidence[1]]).pk,
        make_claim(
            paged,
            evidence=[
                dict(evidence[0], source="paged", start=13, end=19),
                elsewhere,
            ],
        ).pk,
    ]
    items = handout.labeling_items(
        project=project, annotator=personas.annotator, ids=ids
    )
    for item in items[:2]:
        assert "page_label" not in item["evidence"][0]
        assert (item["document"]["pages"], item["document"]["page_count"]) == (
            [],
            None,
        )
    ours, theirs = items[2]["evidence"]
    assert (ours["page"], ours["page_label"]) == (2, "p. 2")
    assert theirs == elsewhere
    assert items[2]["document"]["window_text"] == "Second page."


def test_a_context_not_found_in_the_pdf_names_no_page(personas, api, monkeypatch):
    claim, item = _checked_item(
        personas,
        api,
        monkeypatch,
        "Judgment was reserved until the registrar had filed every exhibit",
    )
    assert claim.reason == "not_in_document"
    assert item["context_found"] is False
    # Its aligned span is only the least bad match: no page is claimed for it.
    [evidence] = item["evidence"]
    assert evidence["source"] == "opinion" and evidence["start"] is not None
    assert "page_label" not in evidence and "page" not in evidence


def test_a_pdf_brief_names_the_page_of_its_citation_not_of_the_opinion(
    tmp_path, settings, unread_broker, personas
):
    settings.CITATION_COMPLETE_REPORTERS = "U.S.:1-10"
    store, index = write_caselaw(tmp_path)
    call_command("import_caselaw", str(store))
    call_command("import_caselaw", str(index), "--index")
    project = make_project(kind="citations")
    brief = make_pdf(
        [
            PAGE_1,
            [
                "The point is settled.",
                '"We hold that the statute does not create a private right of'
                ' action." Doe v. Roe, 5 U.S. 11, 12 (1990).',
            ],
            PAGE_3,
        ]
    )
    report = ingest.documents_import(
        project=project, files=[("brief.pdf", io.BytesIO(brief))]
    )
    assert (report.created, report.errors) == (1, [])
    assert claims_check(project_id=project.pk).checked == 1
    row = Claim.objects.get(project=project)
    [item] = handout.labeling_items(
        project=project, annotator=personas.annotator, ids=[row.pk]
    )
    citation, *others = item["evidence"]
    assert (citation["source"], citation["role"]) == ("brief", "citation")
    assert (citation["page"], citation["page_label"]) == (2, "p. 2")
    # The opinion's passage holding the quotation, and the case, are
    # another source's: no page.
    assert others and all(e["source"] == "doe" for e in others)
    assert all("page_label" not in e for e in others)
    assert item["document"]["page_label"] == "p. 2"
    assert "Doe v. Roe, 5 U.S. 11, 12 (1990)" in item["document"]["window_text"]
    assert FILLER not in item["document"]["window_text"]

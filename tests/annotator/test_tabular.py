"""CSV uploads become the records a JSONL line would hold; a bad row is
reported with the line it starts on."""

import io

import pytest

from annotator.claims import ingest, tabular
from annotator.models import Claim, Document
from pipeline.errors import InputError
from tests.annotator.factories import DOC_TEXT, make_document


def _rows(data: bytes, layout=tabular.CLAIMS):
    return list(tabular.csv_rows(io.BytesIO(data), "preds.csv", layout))


def test_rows_become_claim_records_numbered_by_their_first_line():
    data = (
        b"\xef\xbb\xbfid,document_id,type,value,context,model\r\n"
        b'p1,d1,GPE,Toronto,"took place\r\nin Toronto",gpt-x\r\n'
        b"\r\n"
        b'p2,d1,HearingDate,"{""yyyy"": ""2012""}",on 17 January 2012,\r\n'
    )
    assert _rows(data) == [
        (
            2,
            {
                "id": "p1",
                "document_id": "d1",
                "type": "GPE",
                "context": "took place\r\nin Toronto",
                "value": "Toronto",
                "model": "gpt-x",
            },
        ),
        (
            5,
            {
                "id": "p2",
                "document_id": "d1",
                "type": "HearingDate",
                "context": "on 17 January 2012",
                "value": {"yyyy": "2012"},
            },
        ),
    ]


def test_a_value_that_only_looks_like_json_stays_text():
    data = b"id,document_id,type,value,context\np1,d1,Name,[sic] Smith,Smith\n"
    [(_, record)] = _rows(data)
    assert record["value"] == "[sic] Smith"


def test_header_without_a_required_column_is_one_error_on_line_1():
    [(line, error)] = _rows(b"id,document_id,type,context\np1,d1,GPE,x\n")
    assert line == 1 and isinstance(error, InputError)
    assert "'value'" in str(error)
    assert "id,document_id,type,value,context[,model]" in str(error)


def test_short_row_and_stray_bytes_cost_only_their_own_row():
    data = b"id,text\na,first\nb\nc,caf\xe9\nd,fourth\n"
    rows = _rows(data, tabular.DOCUMENTS)
    assert [line for line, _ in rows] == [2, 3, 4, 5]
    assert rows[0][1] == {"id": "a", "text": "first", "metadata": {}}
    assert "1 cells, the header 2" in str(rows[1][1])
    assert "column 'text' is not UTF-8" in str(rows[2][1])
    assert rows[3][1]["id"] == "d"


def test_extra_document_columns_are_kept_as_metadata():
    [(_, record)] = _rows(b"ID , Text,court,\nd1,Some text,IRB,\n", tabular.DOCUMENTS)
    assert record == {"id": "d1", "text": "Some text", "metadata": {"court": "IRB"}}


@pytest.mark.django_db
def test_documents_and_claims_import_from_csv(personas, settings):
    project = personas.project
    long_text = "x" * 200_000  # over the csv module's default cell limit
    settings.MAX_DOCUMENT_BYTES = 300_000
    documents = f"id,text\nd1,{DOC_TEXT}\nd2,{long_text}\nd3,\n".encode()
    report = ingest.documents_import(
        project=project, files=[("docs.CSV", io.BytesIO(documents))]
    )
    assert (report.created, [(e.line, e.source) for e in report.errors]) == (
        2,
        [(4, "docs.CSV")],
    )
    assert Document.objects.get(project=project, external_id="d2").text == long_text

    claims = (
        b"id,document_id,type,value,context\n"
        b"p1,d1,GPE,Toronto,took place in Toronto\n"
        b"p2,nowhere,GPE,Toronto,took place in Toronto\n"
    )
    report = ingest.claims_import(
        project=project, stream=io.BytesIO(claims), source="preds.csv"
    )
    assert report.created == 1
    [error] = report.errors
    assert error.line == 3 and "unknown document_id 'nowhere'" in error.message
    p1 = Claim.objects.get(project=project, external_id="p1")
    assert (p1.data["value"], p1.model) == ("Toronto", "")
    assert p1.document.external_id == "d1"


@pytest.mark.django_db
def test_a_csv_file_with_only_a_header_has_no_records(personas):
    make_document(personas.project, external_id="d1")
    report = ingest.claims_import(
        project=personas.project,
        stream=io.BytesIO(b"id,document_id,type,value,context\n"),
        source="preds.csv",
    )
    assert [(e.line, e.message) for e in report.errors] == [
        (None, "the file has no records")
    ]

import io
import json

import pytest
from pypdf import PdfWriter

from pipeline.errors import InputError
from pipeline.pdf import (
    PAGE_SEPARATOR,
    normalise_text,
    page_at,
    page_context,
    page_span,
    pdf_document,
)
from tests.pdfs import encrypt, make_pdf

PAGE_1 = ["The hearing was set for 12 March 2012.", "Counsel (for the state) agreed."]
PAGE_2 = ["The appeal was filed in May.", "It was dismissed."]
PAGE_3 = ["Costs were awarded to the respondent."]


@pytest.fixture
def doc():
    return pdf_document(
        make_pdf([PAGE_1, PAGE_2, PAGE_3]), id="d1", metadata={"filename": "a.pdf"}
    )


def test_each_page_slices_out_of_the_text_exactly(doc):
    pages = doc.metadata["pages"]
    assert [p["page"] for p in pages] == [1, 2, 3]
    for p, lines in zip(pages, [PAGE_1, PAGE_2, PAGE_3], strict=True):
        assert doc.text[p["start"] : p["end"]] == "\n".join(lines)
    assert doc.text == PAGE_SEPARATOR.join(
        "\n".join(lines) for lines in [PAGE_1, PAGE_2, PAGE_3]
    )
    assert doc.id == "d1" and doc.metadata["filename"] == "a.pdf"


def test_page_at_finds_the_page_of_each_known_sentence(doc):
    # Stored as JSON (JSONL, a JSONField) and read back, the pages still work.
    pages = json.loads(json.dumps(doc.metadata))["pages"]
    for number, lines in enumerate([PAGE_1, PAGE_2, PAGE_3], start=1):
        for line in lines:
            at = doc.text.index(line)
            assert page_at(pages, at) == number
            assert page_at(pages, at + len(line) - 1) == number


def test_page_at_is_none_between_pages_and_outside_the_text(doc):
    pages = doc.metadata["pages"]
    assert page_at(pages, 0) == 1
    assert page_at(pages, pages[0]["end"]) is None  # first separator character
    assert page_at(pages, pages[1]["start"] - 1) is None
    assert page_at(pages, pages[1]["start"]) == 2
    assert page_at(pages, -1) is None
    assert page_at(pages, len(doc.text)) is None
    assert page_at(pages, len(doc.text) - 1) == 3


def test_span_crossing_a_page_break_names_every_page_it_covers(doc):
    pages, text = doc.metadata["pages"], doc.text
    agreed = text.index("agreed.")
    appeal_end = text.index("appeal") + len("appeal")
    costs_end = text.index("Costs") + len("Costs")
    assert page_span(pages, agreed, appeal_end) == [1, 2]
    assert page_span(pages, agreed, costs_end) == [1, 2, 3]
    assert page_span(pages, text.index("appeal"), appeal_end) == [2]
    assert page_span(pages, appeal_end, appeal_end) == [2]
    assert page_span(pages, pages[0]["end"], pages[1]["start"]) == []
    # Starting inside the separator, the span still lands on page 2 only.
    assert page_span(pages, pages[0]["end"] + 1, appeal_end) == [2]


def test_page_context_shows_text_around_a_span_without_leaving_its_page(doc):
    pages, text = doc.metadata["pages"], doc.text
    start = text.index("filed")
    end = start + len("filed")
    wide = page_context(text, pages, start, end, around=1000)
    assert wide.pages == (2,)
    assert wide.before == "The appeal was "
    assert wide.span == "filed"
    assert wide.after == " in May.\nIt was dismissed."

    narrow = page_context(text, pages, start, end, around=4)
    assert (narrow.before, narrow.after) == ("was ", " in ")

    crossing = page_context(text, pages, text.index("agreed."), end, around=1000)
    assert crossing.pages == (1, 2)
    assert (
        crossing.before
        == "The hearing was set for 12 March 2012.\nCounsel (for the state) "
    )
    assert crossing.span.startswith("agreed.") and crossing.span.endswith("filed")
    assert crossing.after == " in May.\nIt was dismissed."  # nothing from page 3

    with pytest.raises(ValueError, match="no page"):
        page_context(text, pages, pages[0]["end"], pages[1]["start"])


def test_blank_page_keeps_its_number_and_an_empty_range():
    doc = pdf_document(make_pdf([PAGE_1, [], PAGE_3]), id="d")
    pages = doc.metadata["pages"]
    assert pages[1]["page"] == 2 and pages[1]["start"] == pages[1]["end"]
    costs = doc.text.index("Costs")
    assert page_at(doc.metadata["pages"], costs) == 3
    assert page_span(pages, doc.text.index("agreed."), costs + 1) == [1, 2, 3]


def test_ligatures_non_breaking_spaces_and_trailing_blanks_are_normalised():
    doc = pdf_document(
        make_pdf([["The appeal was \x80led\xa0today.   ", "Caf\xe9."]]), id="d"
    )
    assert doc.text == "The appeal was filed today.\nCaf\u00e9."
    assert doc.metadata["pages"] == [{"page": 1, "start": 0, "end": len(doc.text)}]


def test_normalise_text_unifies_line_breaks_and_drops_control_characters():
    raw = "  a\r\nb\rc\fd\x00e\x07 \t\n\n\u2028f\tg  \n"
    assert normalise_text(raw) == "a\nb\nc\nde\n\n\nf\tg"


@pytest.mark.parametrize(
    "data", [b"", b"hello, world", b"\x89PNG\r\n\x1a\n" + b"0" * 64]
)
def test_bytes_that_are_not_a_pdf_are_rejected(data):
    with pytest.raises(InputError, match="not a PDF"):
        pdf_document(data, id="d")


def test_truncated_pdf_is_rejected_as_damaged():
    data = make_pdf([PAGE_1, PAGE_2])
    with pytest.raises(InputError, match="damaged PDF"):
        pdf_document(data[: len(data) // 2], id="d")


def test_encrypted_pdf_needs_its_password():
    data = encrypt(make_pdf([PAGE_1, PAGE_2]), user="secret")
    with pytest.raises(InputError, match="password is needed"):
        pdf_document(data, id="d")
    with pytest.raises(InputError, match="wrong password"):
        pdf_document(data, id="d", password="guess")
    for password in ("secret", "owner"):
        doc = pdf_document(data, id="d", password=password)
        assert doc.text.startswith(PAGE_1[0])
        assert page_at(doc.metadata["pages"], doc.text.index(PAGE_2[0])) == 2


def test_pdf_with_only_an_owner_password_opens_without_one():
    doc = pdf_document(encrypt(make_pdf([PAGE_1]), user=""), id="d")
    assert doc.text == "\n".join(PAGE_1)


def test_aes_pdfs_decrypt_the_kind_most_encrypted_pdfs_are():
    writer = PdfWriter(clone_from=io.BytesIO(make_pdf([PAGE_1])))
    writer.encrypt(user_password="", owner_password="owner", algorithm="AES-256")
    out = io.BytesIO()
    writer.write(out)
    assert pdf_document(out.getvalue(), id="d").text == "\n".join(PAGE_1)


def test_scanned_pdf_without_text_asks_for_ocr():
    with pytest.raises(InputError, match="no extractable text on its 2 page.*OCR"):
        pdf_document(make_pdf([PAGE_1, PAGE_2], scanned=True), id="d")


def test_pdf_over_the_page_limit_is_rejected_and_the_limit_is_inclusive():
    data = make_pdf([PAGE_1, PAGE_2, PAGE_3])
    with pytest.raises(InputError, match="3 pages, over the limit of 2"):
        pdf_document(data, id="d", max_pages=2)
    assert len(pdf_document(data, id="d", max_pages=3).metadata["pages"]) == 3
    assert len(pdf_document(data, id="d", max_pages=None).metadata["pages"]) == 3

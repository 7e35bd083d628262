"""A PDF is read under a text and a time budget checked while each page is
read, so a few compressed kilobytes that expand to megabytes of text are
refused in seconds (issue 27: 4,993 bytes held a web worker 48.6 s)."""

import time

import pytest

from pipeline.errors import InputError
from pipeline.pdf import PdfBudgetError, pdf_document
from tests.pdfs import OPINION, TEXT_BOMB, make_pdf, make_shared_stream_pdf, text_ops

# Unbounded, pypdf takes about 24 s for one page of TEXT_BOMB here (70 s for
# the three): each refusal below must come long before one page is read.
ONE_PAGE_SECONDS = 20


def refused(data: bytes, **budgets) -> tuple[PdfBudgetError, float]:
    started = time.monotonic()
    with pytest.raises(PdfBudgetError) as e:
        pdf_document(data, id="bomb", **budgets)
    return e.value, time.monotonic() - started


def test_the_text_budget_stops_reading_inside_the_first_page():
    error, seconds = refused(TEXT_BOMB, max_text_chars=100_000, read_seconds=60)
    assert error.budget == "max_text_chars"
    assert str(error) == (
        "PDF text is over the limit of 100000 characters (stopped on page 1)"
    )
    assert seconds < ONE_PAGE_SECONDS / 2, seconds


def test_the_text_budget_counts_across_pages_as_they_are_read():
    # 2,000 characters a page: the third page passes 5,000 while it is read.
    data = make_pdf([["x" * 100] * 20] * 4)
    error, _ = refused(data, max_text_chars=5_000)
    assert "stopped on page 3" in str(error)
    document = pdf_document(data, id="d", max_text_chars=10_000)
    assert len(document.metadata["pages"]) == 4


def test_the_time_budget_stops_reading_inside_a_page():
    error, seconds = refused(TEXT_BOMB, read_seconds=1)
    assert error.budget == "read_seconds"
    assert str(error) == "PDF took over 1 s to read (stopped on page 1)"
    # Past the deadline by at most one content stream's parse (a second or
    # two; more on a loaded machine).
    assert seconds < 1 + 5, seconds


def test_a_content_stream_too_large_to_parse_in_time_is_refused():
    # 600,000 operators (1.8 million tokens) on one page, none drawing text.
    data = make_shared_stream_pdf(b"1 2 m\n" * 600_000, pages=1)
    started = time.monotonic()
    with pytest.raises(InputError, match="PDF content is too large to read"):
        pdf_document(data, id="d")
    # pypdf stops parsing at 500,000 tokens (about 2 s here) instead of its
    # default 2 million.
    assert time.monotonic() - started < ONE_PAGE_SECONDS / 2


def test_an_ordinary_pdf_reads_the_same_under_the_budgets():
    free = pdf_document(OPINION, id="o")
    budgeted = pdf_document(OPINION, id="o", max_text_chars=10_000, read_seconds=5)
    assert budgeted == free and len(free.metadata["pages"]) == 3


def test_the_bombs_shape_is_what_the_budgets_are_for():
    assert len(TEXT_BOMB) < 25_000
    assert len(text_ops(b"A" * 100, 50_000)) > 5_000_000

"""PDF documents: one text for the pipeline, page offsets for the people.

The checkers align evidence against one plain string, so a PDF becomes a
:class:`~pipeline.types.Document` whose text is its pages joined by
:data:`PAGE_SEPARATOR`. ``metadata["pages"]`` records where each page lies in
that text (plain dicts, so it survives JSONL and a JSON column), and the
helpers below turn an evidence span back into page numbers and page context.
"""

from __future__ import annotations

import bisect
import io
import re
import time
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pypdf import PasswordType, PdfReader, apply_configuration
from pypdf.errors import DependencyError, LimitReachedError, PyPdfError

from .errors import InputError
from .types import Document

#: Between pages. A blank line, not a form feed: prompts, sentence splitters
#: and the alignment all read it as an ordinary paragraph break, and the page
#: bounds live in ``metadata["pages"]``, so nothing has to find separators.
PAGE_SEPARATOR = "\n\n"

# Control characters PDFs leak into extracted text (NUL, BEL, ...); form feed
# and vertical tab become line breaks first, tab is kept.
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
_LINE_BREAKS = re.compile(r"\r\n?|[\f\v\x85\u2028\u2029]")
_TRAILING_SPACE = re.compile(r"[ \t]+\n")

# pypdf parses a whole content stream before the first operation reaches a
# check below, so the tokens one stream may hold bound how far a read can run
# past ``read_seconds``: 500,000 parse in about 1.5 s, and a dense text page
# holds a few tens of thousands.
_MAX_STREAM_TOKENS = 500_000


class PdfBudgetError(InputError):
    """A PDF over one of :func:`pdf_document`'s budgets; ``budget`` names the
    keyword option (``max_pages``, ``max_text_chars`` or ``read_seconds``)."""

    def __init__(self, message: str, *, budget: str):
        self.budget = budget
        super().__init__(message)


@dataclass(frozen=True)
class PageContext:
    """A span with the text of its page(s) around it, for the labeling screen.

    ``before`` and ``after`` stop at the first and last page's bounds, so the
    context never shows text from a page the span does not touch.
    """

    pages: tuple[int, ...]
    before: str
    span: str
    after: str


def pdf_document(
    data: bytes,
    *,
    id: str,
    password: str | None = None,
    max_pages: int | None = 500,
    max_text_chars: int | None = None,
    read_seconds: float | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> Document:
    """Read a PDF into a Document whose metadata maps text offsets to pages.

    Args:
        data: the PDF file's bytes.
        id: the Document's id.
        password: for a PDF encrypted with a user password; PDFs that only
            restrict printing or copying open without one.
        max_pages: refuse longer PDFs before extracting anything (``None``:
            no limit), so one upload cannot tie up a worker.
        max_text_chars: stop reading, and refuse the PDF, once its pages'
            text passes this many characters (``None``: no limit). Counted
            as the text comes out of each page, so a few compressed bytes
            that expand to megabytes of text cost no more than the limit.
        read_seconds: stop reading, and refuse the PDF, once reading has
            taken this long (``None``: no limit); checked before each page
            and each operation of its content.
        metadata: copied into the Document's metadata beside ``"pages"``.

    Returns:
        A Document; ``metadata["pages"]`` is a list of
        ``{"page": n, "start": s, "end": e}`` (1-based ``n``), with
        ``text[s:e]`` exactly page ``n``'s normalised text.

    Raises:
        PdfBudgetError: over ``max_pages``, ``max_text_chars`` or
            ``read_seconds`` (an InputError).
        InputError: not a PDF, damaged, encrypted without the right password,
            or no page has extractable text (a scanned PDF, which needs OCR
            first).
    """
    if b"%PDF-" not in data[:1024]:
        raise InputError("not a PDF: no %PDF- header in the first 1024 bytes")
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            result = reader.decrypt(password or "")
            if result == PasswordType.NOT_DECRYPTED:
                raise InputError(
                    "encrypted PDF: wrong password"
                    if password
                    else "encrypted PDF: a password is needed to read it"
                )
        count = len(reader.pages)
        if max_pages is not None and count > max_pages:
            raise PdfBudgetError(
                f"PDF has {count} pages, over the limit of {max_pages}",
                budget="max_pages",
            )
        texts = _page_texts(
            reader, max_text_chars=max_text_chars, read_seconds=read_seconds
        )
    except LimitReachedError as e:
        raise InputError(f"PDF content is too large to read ({e})") from e
    except DependencyError as e:
        raise InputError(f"encrypted PDF: cannot decrypt it here ({e})") from e
    except (PyPdfError, ValueError, KeyError, IndexError, TypeError) as e:
        # pypdf reports damaged files through its own errors and, deeper in
        # the object parser, through plain ones.
        raise InputError(f"damaged PDF: {e}") from e
    if not any(texts):
        raise InputError(
            f"PDF has no extractable text on its {count} page(s); "
            "it looks scanned and needs OCR first"
        )
    pages, offset = [], 0
    for number, page_text in enumerate(texts, start=1):
        pages.append({"page": number, "start": offset, "end": offset + len(page_text)})
        offset += len(page_text) + len(PAGE_SEPARATOR)
    return Document(
        id=id,
        text=PAGE_SEPARATOR.join(texts),
        metadata={**(metadata or {}), "pages": pages},
    )


class _ReadBudget:
    """The time and text budgets of one read, checked from pypdf's visitor
    callbacks: while a page is read, not after."""

    def __init__(self, *, max_text_chars: int | None, read_seconds: float | None):
        self.max_text_chars = max_text_chars
        self.read_seconds = read_seconds
        self.deadline = None
        if read_seconds is not None:
            self.deadline = time.monotonic() + read_seconds
        self.chars = 0
        self.page = 0

    def in_time(self, *_) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise PdfBudgetError(
                f"PDF took over {self.read_seconds:g} s to read (stopped on page "
                f"{self.page})",
                budget="read_seconds",
            )

    def count(self, text: str, *_) -> None:
        # The raw text as it comes out, before normalising: what reading costs.
        self.chars += len(text)
        if self.max_text_chars is not None and self.chars > self.max_text_chars:
            raise PdfBudgetError(
                f"PDF text is over the limit of {self.max_text_chars} characters "
                f"(stopped on page {self.page})",
                budget="max_text_chars",
            )


def _page_texts(
    reader: PdfReader, *, max_text_chars: int | None, read_seconds: float | None
) -> list[str]:
    """Each page's normalised text, read under the budgets."""
    budget = _ReadBudget(max_text_chars=max_text_chars, read_seconds=read_seconds)
    texts = []
    with apply_configuration(stream_parsing_work_maximum_count=_MAX_STREAM_TOKENS):
        for number, page in enumerate(reader.pages, start=1):
            budget.page = number
            budget.in_time()
            text = page.extract_text(
                visitor_operand_before=budget.in_time, visitor_text=budget.count
            )
            texts.append(normalise_text(text))
    return texts


def normalise_text(text: str) -> str:
    """Make one page's extracted text predictable.

    NFKC turns the ligatures and compatibility forms PDFs store (``ﬁ``,
    non-breaking spaces) into what an LLM copies back as evidence; line
    breaks become ``\\n``, stray control characters go, and trailing spaces
    on each line and blank space around the page are dropped. Hyphenation is
    left as printed.
    """
    text = unicodedata.normalize("NFKC", text)
    text = _CONTROL.sub("", _LINE_BREAKS.sub("\n", text))
    return _TRAILING_SPACE.sub("\n", text + "\n").strip()


def page_at(pages: Sequence[Mapping[str, int]], offset: int) -> int | None:
    """The page number holding the character at ``offset``.

    Returns:
        The 1-based page, or None for an offset in a page separator or
        outside the text.
    """
    i = bisect.bisect_right([p["start"] for p in pages], offset) - 1
    if i >= 0 and offset < pages[i]["end"]:
        return pages[i]["page"]
    return None


def page_span(pages: Sequence[Mapping[str, int]], start: int, end: int) -> list[int]:
    """The pages an evidence span ``text[start:end]`` touches, in order.

    A span crossing a page break names every page it covers; an empty span
    names the page of ``start``; a span wholly inside a separator names none.
    """
    if start >= end:
        page = page_at(pages, start)
        return [] if page is None else [page]
    return [p["page"] for p in pages if p["start"] < end and start < p["end"]]


def page_context(
    text: str,
    pages: Sequence[Mapping[str, int]],
    start: int,
    end: int,
    *,
    around: int = 300,
) -> PageContext:
    """Up to ``around`` characters either side of a span, within its page(s).

    Raises:
        ValueError: the span touches no page (it lies in a separator or
            outside the text).
    """
    touched = page_span(pages, start, end)
    if not touched:
        raise ValueError(f"span {start}:{end} lies on no page")
    by_number = {p["page"]: p for p in pages}
    first, last = by_number[touched[0]], by_number[touched[-1]]
    low = max(first["start"], start - around)
    high = min(last["end"], end + around)
    return PageContext(
        pages=tuple(touched),
        before=text[low:start] if low < start else "",
        span=text[start:end],
        after=text[end:high] if end < high else "",
    )

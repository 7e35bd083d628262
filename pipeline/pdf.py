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
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pypdf import PasswordType, PdfReader
from pypdf.errors import DependencyError, PyPdfError

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
        metadata: copied into the Document's metadata beside ``"pages"``.

    Returns:
        A Document; ``metadata["pages"]`` is a list of
        ``{"page": n, "start": s, "end": e}`` (1-based ``n``), with
        ``text[s:e]`` exactly page ``n``'s normalised text.

    Raises:
        InputError: not a PDF, damaged, encrypted without the right password,
            over ``max_pages`` pages, or no page has extractable text (a
            scanned PDF, which needs OCR first).
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
            raise InputError(f"PDF has {count} pages, over the limit of {max_pages}")
        texts = [normalise_text(page.extract_text()) for page in reader.pages]
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

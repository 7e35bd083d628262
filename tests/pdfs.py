"""Real PDFs for tests, written by hand (no PDF writer library needed): pages
of text lines in Helvetica, scanned-looking pages, encrypted copies."""

from __future__ import annotations

import io
import zlib

from pypdf import PdfWriter

# Helvetica is one of the 14 standard fonts: no font file needed. WinAnsi
# gives Latin-1 bytes their usual meaning; code 128 is remapped to the "fi"
# ligature glyph, as typesetters store it.
FONT = (
    b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding"
    b" << /Type /Encoding /BaseEncoding /WinAnsiEncoding /Differences [128 /fi] >> >>"
)
IMAGE = b"<< /Type /XObject /Subtype /Image /Width 1 /Height 1"
IMAGE += b" /ColorSpace /DeviceGray /BitsPerComponent 8 /Length 1 >>\nstream\n\x00"


def make_pdf(
    pages: list[list[str]], *, scanned: bool = False, trailer: bytes = b""
) -> bytes:
    """A real PDF, written by hand: each page shows its lines in Helvetica.

    ``scanned`` draws a 1x1 image on every page instead of text.
    """
    objects = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        3: FONT,
        4: IMAGE + b"\nendstream",
    }
    kids = []  # object 2, the page tree, is written last: it lists the pages
    for lines in pages:
        if scanned:
            ops = b"q 500 0 0 700 50 50 cm /Im1 Do Q"
        else:
            shown = b"".join(b"(%s) Tj T*\n" % escape(line) for line in lines)
            ops = b"BT /F1 12 Tf 72 720 Td 14 TL\n" + shown + b"ET"
        content, page = len(objects) + 2, len(objects) + 3
        objects[content] = b"<< /Length %d >>\nstream\n%s\nendstream" % (len(ops), ops)
        objects[page] = (
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R"
            b" /Resources << /Font << /F1 3 0 R >> /XObject << /Im1 4 0 R >> >> >>"
            % content
        )
        kids.append(b"%d 0 R" % page)
    objects[2] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
        b" ".join(kids),
        len(kids),
    )
    return _serialize(objects, trailer)


def make_shared_stream_pdf(ops: bytes, *, pages: int) -> bytes:
    """A PDF of ``pages`` pages that all draw one Flate-compressed content
    stream, ``ops``: megabytes of text operations compress to a few
    kilobytes, and every page expands them again (the shape of issue 27's
    4,993-byte upload that held a web worker 48.6 s)."""
    packed = zlib.compress(ops, 9)
    objects = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        3: FONT,
        4: b"<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream"
        % (len(packed), packed),
    }
    page = (
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /Font << /F1 3 0 R >> >> >>"
    )
    kids = [b"%d 0 R" % (5 + i) for i in range(pages)]
    objects.update({5 + i: page for i in range(pages)})
    objects[2] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(kids), pages)
    return _serialize(objects)


def _serialize(objects: dict[int, bytes], trailer: bytes = b"") -> bytes:
    """Numbered objects as a PDF file, with its cross-reference table."""
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number in range(1, len(objects) + 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, objects[number])
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R %s>>\n" % (len(objects) + 1, trailer)
    return bytes(out + b"startxref\n%d\n%%%%EOF\n" % xref)


def text_ops(line: bytes, times: int) -> bytes:
    """A content stream showing ``line`` ``times`` times, a line each."""
    return b"BT /F1 12 Tf 72 720 Td 14 TL\n" + b"(%s) Tj T*\n" % line * times + b"ET"


# Three pages sharing one 5 MB stream of text operations: 5 million
# characters a page, from a file of a few kilobytes.
TEXT_BOMB = make_shared_stream_pdf(text_ops(b"A" * 100, 50_000), pages=3)


def escape(line: str) -> bytes:
    return (
        line.replace("\\", "\\\\")
        .replace("(", "\\(")
        .replace(")", "\\)")
        .encode("latin-1")
    )


def encrypt(data: bytes, *, user: str, owner: str = "owner") -> bytes:
    writer = PdfWriter(clone_from=io.BytesIO(data))
    writer.encrypt(user_password=user, owner_password=owner, algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


# A three-page opinion. Pages 1 and 3 are long: a labeling window of a few
# hundred characters either side of evidence on the short page 2 would run
# into both of them.
FILLER = "The tribunal reviewed the record of the proceedings below in full."
PAGE_1 = ["IN THE COURT OF APPEAL", *[f"{i}. {FILLER}" for i in range(1, 9)]]
PAGE_2 = [
    "The appeal was heard in Toronto on 3 May 2019.",
    "Counsel for the appellant argued the point at length.",
]
PAGE_3 = [*[f"{i}. {FILLER}" for i in range(9, 17)], "Appeal dismissed."]
OPINION = make_pdf([PAGE_1, PAGE_2, PAGE_3])

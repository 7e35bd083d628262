"""What every upload form of the set-up page shares, the kinds' own too:
the size check, opening an upload for the import services, and the report
the page shows."""

from __future__ import annotations

from django.conf import settings

from annotator.claims import ingest


def upload_problem(files) -> str | None:
    """Why ``files`` cannot be imported (none, or too big), or None."""
    if not files:
        return "choose a file to upload"
    # Again after parsing: a body sent without a Content-Length.
    size = sum(f.size or 0 for f in files)
    if size > settings.MAX_UPLOAD_BYTES:
        return (
            f"{size} bytes sent, over the limit of {settings.MAX_UPLOAD_BYTES} "
            "bytes (MAX_UPLOAD_BYTES); split the upload"
        )
    return None


def opened(upload):
    """An uploaded file opened for the import services."""
    upload.open("rb")  # binary lines, as the import services read them
    return upload


def reported(report: ingest.ImportReport, what: str) -> dict:
    """The page's context for an import's report, under its title ``what``."""
    # In file and line order: the database's refusals come after the
    # parse's in the report, a batch later.
    errors = sorted(report.errors, key=lambda e: (e.source, e.line or 0))
    return {"report": report, "report_what": what, "report_errors": errors}

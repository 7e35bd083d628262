"""CSV uploads: each row as the JSON object a JSONL line would hold, so the
import services parse, check and report both alike.

Rows are numbered by the line they start on (the header is line 1), as a
spreadsheet shows them; a bad row is reported in place of its record.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from pipeline.errors import InputError
from pipeline.jsonl import value_problem

# Python's csv module stops at 128 KiB a cell; a document may be as long as
# the import allows (longer ones are then reported by the import, not here).
# The limit is process-wide, so it is only ever raised.
_CELL_MARGIN = 1024


@dataclass(frozen=True)
class Layout:
    """The columns of one kind of record, and how a row becomes its object."""

    required: tuple[str, ...]
    optional: tuple[str, ...]
    record: Callable[[dict[str, str]], dict[str, Any]]

    @property
    def columns(self) -> str:
        optional = "".join(f"[,{name}]" for name in self.optional)
        return ",".join(self.required) + optional


def _document(row: dict[str, str]) -> dict[str, Any]:
    # Columns beyond id and text are kept as the document's metadata.
    metadata = {k: v for k, v in row.items() if k not in ("id", "text") and v}
    return {"id": row["id"], "text": row["text"], "metadata": metadata}


def _cell_value(cell: str) -> Any:
    """A cell that holds a JSON object or list is that value (a date's
    fields, a list of names); any other cell is its text."""
    if cell.lstrip().startswith(("{", "[")):
        try:
            return json.loads(cell)
        except ValueError:
            pass
    return cell


def _claim(row: dict[str, str]) -> dict[str, Any]:
    record: dict[str, Any] = {
        k: v for k, v in row.items() if k not in ("model", "value")
    }
    record["value"] = _cell_value(row["value"])
    if row.get("model"):
        record["model"] = row["model"]
    return record


DOCUMENTS = Layout(required=("id", "text"), optional=(), record=_document)
CLAIMS = Layout(
    required=("id", "document_id", "type", "value", "context"),
    optional=("model",),
    record=_claim,
)


def is_csv(name: str) -> bool:
    return name.lower().endswith(".csv")


def _text_lines(stream: Iterable[bytes]) -> Iterator[str]:
    # Line by line, so a stray byte spoils only its own row: undecodable
    # bytes become lone surrogates, which the row's check reports.
    for number, raw in enumerate(stream, start=1):
        line = raw.decode("utf-8", errors="surrogateescape")
        yield line.removeprefix("\ufeff") if number == 1 else line


def _row_problem(record: dict[str, Any]) -> str | None:
    for name, value in record.items():
        problem = value_problem(value)
        if problem and "surrogate" in problem:
            return f"column {name!r} is not UTF-8"
        if problem:
            return f"column {name!r} {problem}"
    return None


def csv_rows(
    stream: Iterable[bytes], source: str, layout: Layout
) -> Iterator[tuple[int, Any | InputError]]:
    """``(line, record or InputError)`` for each non-blank row of a CSV file
    with a header, like ``pipeline.jsonl.iter_jsonl_stream`` for JSONL.

    A header without the layout's required columns is one error (line 1) and
    nothing more is read.
    """
    limit = settings.MAX_DOCUMENT_BYTES + _CELL_MARGIN
    if csv.field_size_limit() < limit:
        csv.field_size_limit(limit)
    reader = csv.reader(_text_lines(stream))
    header: list[str] | None = None
    end = 0
    while True:
        start = end + 1
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            end = reader.line_num
            yield start, InputError(f"not CSV: {e}", path=source, line=start)
            continue
        end = reader.line_num
        if not any(cell.strip() for cell in cells):
            continue
        if header is None:
            header = [cell.strip().lower() for cell in cells]
            problem = _header_problem(header, layout)
            if problem:
                yield start, InputError(problem, path=source, line=start)
                return
            continue
        if len(cells) != len(header):
            problem = (
                f"the row has {len(cells)} cells, the header {len(header)} "
                f"({layout.columns})"
            )
            yield start, InputError(problem, path=source, line=start)
            continue
        # A column without a name (a trailing comma) is dropped.
        row = {k: v for k, v in zip(header, cells, strict=True) if k}
        problem = _row_problem(row)
        if problem:
            yield start, InputError(problem, path=source, line=start)
            continue
        yield start, layout.record(row)


def _header_problem(header: list[str], layout: Layout) -> str | None:
    missing = [name for name in layout.required if name not in header]
    if missing:
        names = ", ".join(repr(name) for name in missing)
        return f"the header lacks {names}: the columns are {layout.columns}"
    repeated = sorted({name for name in header if name and header.count(name) > 1})
    if repeated:
        return f"the header repeats {', '.join(repr(name) for name in repeated)}"
    return None

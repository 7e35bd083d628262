"""JSONL reading and writing in the pipeline's data contract.

Readers never stop at a bad line: they yield the good records and collect an
:class:`InputError` naming file and line for each bad one.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal, TypeVar, overload

from .errors import InputError
from .types import Alignment, CheckedClaim, Claim, Document, Label

T = TypeVar("T")

#: Deeper JSON is refused: no record needs it, and code that walks a value
#: recursively (json.dumps among it) would hit Python's recursion limit.
MAX_DEPTH = 64
# NUL and lone surrogates: valid in a Python string, refused by UTF-8 and by
# databases (Postgres text and jsonb), and never meant by whoever wrote them.
_UNSTORABLE = re.compile(r"[\x00\ud800-\udfff]")


def text_problem(text: str) -> str | None:
    """Why ``text`` cannot be stored as UTF-8 text (NUL, lone surrogate), or None."""
    match = _UNSTORABLE.search(text)
    if match is None:
        return None
    if match.group() == "\x00":
        return "contains a NUL character"
    return "contains a lone surrogate (not valid Unicode)"


def value_problem(value: Any, *, max_depth: int = MAX_DEPTH) -> str | None:
    """Why a parsed JSON value cannot be stored, or None.

    Checks every string and key (:func:`text_problem`), every number (NaN and
    infinities are not JSON) and the nesting depth, without recursion.

    Args:
        value: what ``json.loads`` returned (or a value about to be dumped).
        max_depth: the deepest nesting of lists and objects allowed.

    Returns:
        A phrase to follow the value's name ("contains a NUL character"), or
        None when the value can be stored.
    """
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if item is None or isinstance(item, (bool, int)):
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                return "contains a number that is not finite (NaN or Infinity)"
            continue
        if isinstance(item, str):
            problem = text_problem(item)
            if problem:
                return problem
            continue
        if not isinstance(item, (list, dict)):
            return f"is not JSON ({type(item).__name__})"
        if depth >= max_depth:
            return f"is nested deeper than {max_depth} levels"
        if isinstance(item, dict):
            for key in item:
                if not isinstance(key, str):
                    return "has a key that is not text"
                problem = text_problem(key)
                if problem:
                    return f"has a key that {problem}"
            item = list(item.values())
        stack.extend((child, depth + 1) for child in item)
    return None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


@dataclass
class ReadReport:
    """Records read from one file and the errors of the lines skipped."""

    records: list[Any] = field(default_factory=list)
    #: the line number of each record, for later errors about it
    lines: list[int] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)


@overload
def _text(obj: dict[str, Any], key: str, *, required: Literal[True] = ...) -> str: ...
@overload
def _text(obj: dict[str, Any], key: str, *, required: bool) -> str | None: ...
def _text(obj: dict[str, Any], key: str, *, required: bool = True) -> str | None:
    value = obj.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value):
        raise ValueError(f"field {key!r} must be a non-empty string")
    return value


def _object(raw: Any) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise ValueError("each line must be a JSON object")
    return raw


def document_from_json(raw: Any) -> Document:
    obj = _object(raw)
    metadata = obj.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise ValueError("field 'metadata' must be an object")
    text = obj.get("text")
    if not isinstance(text, str) or not text.strip():
        raise ValueError("field 'text' must be a non-empty string")
    return Document(id=_text(obj, "id"), text=text, metadata=metadata)


_CLAIM_KEYS = {"id", "document_id", "model", "type", "value", "context"}


def claim_from_json(raw: Any) -> Claim:
    obj = _object(raw)
    if "value" not in obj:
        raise ValueError("field 'value' is missing (use null for none)")
    context = obj.get("context")
    if context is None:
        context = ""
    if not isinstance(context, str):
        raise ValueError("field 'context' must be a string")
    return Claim(
        id=_text(obj, "id"),
        document_id=_text(obj, "document_id"),
        type=_text(obj, "type"),
        value=obj["value"],
        context=context,
        model=_text(obj, "model", required=False),
        extra={k: v for k, v in obj.items() if k not in _CLAIM_KEYS},
    )


#: The labels' claim key before this release, still read for one release.
OLD_CLAIM_ID = "prediction_id"


def label_from_json(raw: Any) -> Label:
    obj = _object(raw)
    if "claim_id" not in obj and OLD_CLAIM_ID in obj:
        obj = {("claim_id" if k == OLD_CLAIM_ID else k): v for k, v in obj.items()}
    label = obj.get("label")
    if label not in ("safe", "unsafe"):
        raise ValueError("field 'label' must be 'safe' or 'unsafe'")
    return Label(
        claim_id=_text(obj, "claim_id"),
        label=label,
        extra={k: v for k, v in obj.items() if k not in ("claim_id", "label")},
    )


def claim_to_json(p: Claim) -> dict[str, Any]:
    out: dict[str, Any] = {"id": p.id, "document_id": p.document_id}
    if p.model is not None:
        out["model"] = p.model
    out.update(type=p.type, value=p.value, context=p.context)
    out.update(p.extra)
    return out


def document_to_json(d: Document) -> dict[str, Any]:
    out: dict[str, Any] = {"id": d.id, "text": d.text}
    if d.metadata:
        out["metadata"] = d.metadata
    return out


def label_to_json(label: Label) -> dict[str, Any]:
    return {"claim_id": label.claim_id, "label": label.label, **label.extra}


def checked_to_json(c: CheckedClaim) -> dict[str, Any]:
    a = c.align
    return {
        **claim_to_json(c.claim),
        "hypothesis": c.hypothesis,
        "align": {
            "score": round(a.score, 4),
            "start": a.start,
            "end": a.end,
            "text": a.text,
        },
        "nli_score": None if c.score is None else round(c.score, 4),
        "verdict": c.verdict,
        "reason": c.reason,
    }


def checked_from_json(raw: Any) -> CheckedClaim:
    obj = _object(raw)
    align = obj.get("align")
    if not isinstance(align, dict) or not isinstance(align.get("score"), (int, float)):
        raise ValueError("field 'align' must be an object with a numeric 'score'")
    if obj.get("verdict") not in ("safe", "unsafe", "unscored"):
        raise ValueError("field 'verdict' must be 'safe', 'unsafe' or 'unscored'")
    extra_keys = {"hypothesis", "align", "nli_score", "verdict", "reason"}
    claim = claim_from_json({k: v for k, v in obj.items() if k not in extra_keys})
    return CheckedClaim(
        claim=claim,
        hypothesis=str(obj.get("hypothesis", "")),
        align=Alignment(
            score=float(align["score"]),
            start=align.get("start"),
            end=align.get("end"),
            text=str(align.get("text") or ""),
        ),
        score=obj.get("nli_score"),
        verdict=obj["verdict"],
        reason=obj.get("reason"),
    )


def iter_jsonl_stream(
    stream: Iterable[bytes], source: str
) -> Iterator[tuple[int, Any | InputError]]:
    """Yield ``(line_number, parsed_json_or_error)`` for each non-blank line.

    A line that is not UTF-8, not JSON (NaN and Infinity included) or not
    storable (:func:`value_problem`) yields an :class:`InputError` naming
    ``source`` and the line in place of the value, so one bad line never hides
    the rest. Works on any binary stream: an upload need not be on disk.
    """
    for number, raw in enumerate(stream, start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            yield (
                number,
                InputError(f"not UTF-8 (byte {e.start})", path=source, line=number),
            )
            continue
        if number == 1:
            line = line.removeprefix("\ufeff")  # a byte-order mark (Windows)
        if not line.strip():
            continue
        try:
            value = json.loads(line, parse_constant=_refuse_constant)
        except json.JSONDecodeError as e:
            yield (
                number,
                InputError(f"invalid JSON: {e.msg}", path=source, line=number),
            )
            continue
        except ValueError as e:  # NaN, Infinity
            yield number, InputError(f"invalid JSON: {e}", path=source, line=number)
            continue
        except RecursionError:
            message = f"invalid JSON: nested deeper than {MAX_DEPTH} levels"
            yield number, InputError(message, path=source, line=number)
            continue
        problem = value_problem(value)
        if problem:
            yield number, InputError(f"the line {problem}", path=source, line=number)
            continue
        yield number, value


def iter_jsonl_lines(path: str | Path) -> Iterator[tuple[int, Any | InputError]]:
    """:func:`iter_jsonl_stream` over a file.

    Raises:
        InputError: the file cannot be opened.
    """
    path = str(path)
    try:
        handle = open(path, "rb")
    except OSError as e:
        raise InputError(f"cannot open: {e.strerror}", path=path) from e
    with handle:
        yield from iter_jsonl_stream(handle, path)


def write_jsonl_stream(out: IO[str], rows: Iterable[dict[str, Any]]) -> int:
    """Write ``rows`` as JSONL to a text stream; returns how many."""
    count = 0
    for row in rows:
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
        count += 1
    return count


def read_jsonl(path: str | Path, parse: Callable[[Any], T]) -> ReadReport:
    """Parse every line of ``path`` with ``parse``, collecting bad lines.

    A record whose id repeats an earlier line's is reported and skipped.
    """
    report = ReadReport()
    seen: dict[str, int] = {}
    for number, value in iter_jsonl_lines(path):
        if isinstance(value, InputError):
            report.errors.append(value)
            continue
        try:
            record = parse(value)
        except ValueError as e:
            report.errors.append(InputError(str(e), path=str(path), line=number))
            continue
        key = getattr(record, "id", None) or getattr(record, "claim_id", None)
        if key is not None and key in seen:
            report.errors.append(
                InputError(
                    f"duplicate id {key!r} (first on line {seen[key]}); line skipped",
                    path=str(path),
                    line=number,
                )
            )
            continue
        if key is not None:
            seen[key] = number
        report.records.append(record)
        report.lines.append(number)
    return report


def write_jsonl(path: str | Path, rows: Iterable[dict[str, Any]]) -> int:
    """Write ``rows`` as UTF-8 JSONL to ``path``; returns how many were written."""
    with open(path, "w", encoding="utf-8") as out:
        return write_jsonl_stream(out, rows)

"""RAG items: a question, the answer generated for it, and the context items
the generator was given.

An item travels as one JSONL line (the CLI, the online endpoint) or, in the
web app, as a document holding the contexts (joined, with their offsets in
``metadata``) and a claim holding the answer; :func:`item_document` and
:func:`item_from_document` convert between the two.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from ...types import Document

ItemLabel = Literal["supported", "hallucinated"]
LABELS: tuple[str, ...] = ("supported", "hallucinated")
#: Between two contexts in an item's document: a paragraph break, so no
#: sentence runs from one context into the next.
CONTEXT_SEPARATOR = "\n\n"
_ITEM_KEYS = {"id", "query", "answer", "contexts", "label"}
# Half of a UTF-16 pair alone (JSON's "\ud800" escape reads as one) is not a
# character: tokenizers refuse it (a TypeError) and UTF-8 cannot hold it. NUL
# is no text either, and Postgres refuses it in a stored item.
_NOT_TEXT = re.compile("[\x00\ud800-\udfff]")


@dataclass(frozen=True)
class Context:
    """One context item: its id (given, or its index as a string) and text."""

    id: str
    text: str


@dataclass(frozen=True)
class RagItem:
    """One answer to check. ``query`` may be empty (a summary checks against
    its document with no question); ``label`` is an expert's or a
    benchmark's, when known."""

    id: str
    query: str
    answer: str
    contexts: tuple[Context, ...]
    label: ItemLabel | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _string(obj: dict[str, Any], key: str, *, empty: bool) -> str:
    value = obj.get(key, "" if empty else None)
    if not isinstance(value, str) or not (empty or value.strip()):
        kind = "a string" if empty else "a non-empty string"
        raise ValueError(f"field {key!r} must be {kind}")
    return value


def _contexts(raw: Any) -> tuple[Context, ...]:
    if not isinstance(raw, list) or not raw:
        raise ValueError("field 'contexts' must be a non-empty list")
    out, seen = [], set()
    for i, c in enumerate(raw):
        if isinstance(c, str):
            context = Context(str(i), c)
        elif isinstance(c, dict) and isinstance(c.get("text"), str):
            cid = c.get("id", i)
            if not isinstance(cid, (str, int)) or isinstance(cid, bool):
                raise ValueError(f"contexts[{i}]: 'id' must be a string or number")
            context = Context(str(cid), c["text"])
        else:
            raise ValueError(
                f"contexts[{i}] must be a string or an object with a 'text' string"
            )
        if context.id in seen:
            raise ValueError(f"contexts[{i}]: id {context.id!r} is repeated")
        seen.add(context.id)
        out.append(context)
    if not any(c.text.strip() for c in out):
        raise ValueError("every context is empty")
    return tuple(out)


def item_from_json(raw: Any) -> RagItem:
    """Read one item line.

    Raises:
        ValueError: naming the field that is missing or malformed.
    """
    if not isinstance(raw, dict):
        raise ValueError("each line must be a JSON object")
    _refuse_non_text(raw)
    item_id = raw.get("id")
    if isinstance(item_id, int) and not isinstance(item_id, bool):
        item_id = str(item_id)
    if not isinstance(item_id, str) or not item_id.strip():
        raise ValueError("field 'id' must be a non-empty string")
    label = raw.get("label")
    if label is not None and label not in LABELS:
        raise ValueError(f"field 'label' must be one of {', '.join(LABELS)}")
    return RagItem(
        id=item_id,
        query=_string(raw, "query", empty=True),
        answer=_string(raw, "answer", empty=False),
        contexts=_contexts(raw.get("contexts")),
        label=label,
        extra={k: v for k, v in raw.items() if k not in _ITEM_KEYS},
    )


def _refuse_non_text(raw: dict[str, Any]) -> None:
    """ValueError naming the field where a NUL or a lone surrogate is, in any
    string of the line, extra fields included (they are written back out)."""
    for key, value in raw.items():
        # A stack, not recursion: the line may nest as deep as the JSON
        # parser allowed.
        stack = [key, value]
        while stack:
            x = stack.pop()
            found = _NOT_TEXT.search(x) if isinstance(x, str) else None
            if found:
                what = "a NUL" if found.group() == "\x00" else "a lone surrogate"
                raise ValueError(
                    f"field {key!r} holds {what} ({ascii(found.group())}), "
                    "which is not text"
                )
            if isinstance(x, dict):
                stack.extend(x)
                stack.extend(x.values())
            elif isinstance(x, list):
                stack.extend(x)


def item_to_json(item: RagItem) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": item.id,
        "query": item.query,
        "answer": item.answer,
        "contexts": [{"id": c.id, "text": c.text} for c in item.contexts],
    }
    if item.label is not None:
        out["label"] = item.label
    return {**out, **item.extra}


def item_document(item: RagItem) -> Document:
    """The item's contexts as one document: joined by a paragraph break, each
    context's id and offsets (and the query) in ``metadata``."""
    parts: list[str] = []
    spans: list[dict[str, Any]] = []
    at = 0
    for c in item.contexts:
        if parts:
            at += len(CONTEXT_SEPARATOR)
        spans.append({"id": c.id, "start": at, "end": at + len(c.text)})
        parts.append(c.text)
        at += len(c.text)
    return Document(
        id=item.id,
        text=CONTEXT_SEPARATOR.join(parts),
        metadata={"query": item.query, "contexts": spans},
    )


def item_from_document(
    document: Document, *, answer: str, item_id: str | None = None
) -> RagItem:
    """The item a document (from :func:`item_document`) and an answer make.

    A document without context offsets is one context (a plain text
    uploaded as a RAG project's context).
    """
    meta = document.metadata or {}
    spans = meta.get("contexts") or [{"id": "0", "start": 0, "end": len(document.text)}]
    contexts = tuple(
        Context(str(s["id"]), document.text[s["start"] : s["end"]]) for s in spans
    )
    return RagItem(
        id=item_id or document.id,
        query=str(meta.get("query") or ""),
        answer=answer,
        contexts=contexts,
    )

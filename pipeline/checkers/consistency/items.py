"""Items to check and checked items, as JSONL lines.

An item is ``{"id", "prompt", "response", "samples"?}``; a FELM line is one
too, its ``"index"`` standing in for the id. ``samples`` are texts or objects
``{"text", "model"?, "variant"?}``: a checked line records each sample's
model and variant, so feeding it back in reuses them instead of sampling
again (the results of the last check are dropped and made anew).

In the web app an item is a document: its response the text, its prompt,
samples, corrections and other fields in ``metadata`` (:func:`item_document`,
:func:`item_from_document`); the checker finds the blocks in it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ...types import Document

JudgementLabel = Literal["ACCURATE", "CONTRADICTION", "NEUTRAL", "UNKNOWN"]
ResponseLabel = Literal["FACTUAL", "NON-FACTUAL"]
#: What a checked line adds; dropped when one is read back as an item.
RESULT_KEYS = ("blocks", "score", "label", "corrected", "improved", "notes", "usage")
_ITEM_KEYS = {"id", "prompt", "response", "samples"}


@dataclass(frozen=True)
class Sample:
    """A response to the prompt (or a variant of it) from a sampler model.

    ``note`` says when the variant could not be made and the original prompt
    was sent instead.
    """

    text: str
    model: str | None = None
    variant: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class Correction:
    """The improver's correction of the block ``text`` at ``start``..``end``
    of a response, and the error summary it was made from. Kept with the
    item, so it outlives a re-check; it holds while the response still has
    ``text`` there."""

    start: int
    end: int
    text: str
    correction: str
    summary: str | None = None

    def holds(self, response: str) -> bool:
        return response[self.start : self.end] == self.text


@dataclass(frozen=True)
class Item:
    """A prompt and the response to check; ``samples`` empty until sampled,
    ``corrections`` until a corrections run (web app) made them."""

    id: str
    prompt: str
    response: str
    samples: tuple[Sample, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)
    corrections: tuple[Correction, ...] = ()


@dataclass(frozen=True)
class Judgement:
    """One block against one sample (its index in the item's samples)."""

    sample: int
    label: JudgementLabel
    evidence: str


@dataclass(frozen=True)
class Block:
    """A sentence of the response (``start``/``end`` offsets in it), its
    judgements, score, label and, when flagged and mitigated, the error
    summary and its corrected text."""

    start: int
    end: int
    text: str
    judgements: tuple[Judgement, ...]
    score: float | None
    label: JudgementLabel
    summary: str | None = None
    correction: str | None = None


@dataclass(frozen=True)
class Improvement:
    """The response after cross-model reflection, and what changed."""

    text: str
    explanation: str | None


@dataclass(frozen=True)
class ItemResult:
    """A checked item. ``item.samples`` holds the samples judged against;
    ``notes`` the soft failures (an unusable reformulation or correction);
    ``usage`` what the item's calls spent (:meth:`Tally.to_json`)."""

    item: Item
    blocks: tuple[Block, ...]
    score: float | None
    label: ResponseLabel
    corrected: str | None = None
    improved: Improvement | None = None
    notes: tuple[str, ...] = ()
    usage: dict[str, Any] = field(default_factory=dict)


def _string(obj: dict[str, Any], key: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"field {key!r} must be a non-empty string")
    return value


def _id(obj: dict[str, Any]) -> str:
    key = "id" if "id" in obj else "index"
    value = obj.get(key)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str) or not value.strip():
        raise ValueError("field 'id' (or FELM's 'index') must be a non-empty string")
    return value


def _optional_text(entry: dict[str, Any], key: str, where: str) -> str | None:
    value = entry.get(key)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{where}: {key!r} must be a string")
    return value


def _samples(raw: Any) -> tuple[Sample, ...]:
    if not isinstance(raw, list) or not raw:
        raise ValueError("field 'samples' must be a non-empty list")
    out = []
    for i, entry in enumerate(raw):
        where = f"samples[{i}]"
        if isinstance(entry, str):
            out.append(Sample(entry))
        elif isinstance(entry, dict) and isinstance(entry.get("text"), str):
            out.append(
                Sample(
                    entry["text"],
                    model=_optional_text(entry, "model", where),
                    variant=_optional_text(entry, "variant", where),
                    note=_optional_text(entry, "note", where),
                )
            )
        else:
            raise ValueError(f"{where} must be a string or an object with 'text'")
    return tuple(out)


def item_from_json(raw: Any) -> Item:
    """An :class:`Item` from a parsed JSONL line.

    Raises:
        ValueError: the line is not an object or a field is wrong, named.
    """
    if not isinstance(raw, dict):
        raise ValueError("each line must be a JSON object")
    samples = _samples(raw["samples"]) if raw.get("samples") is not None else ()
    return Item(
        id=_id(raw),
        prompt=_string(raw, "prompt"),
        response=_string(raw, "response"),
        samples=samples,
        extra={
            k: v for k, v in raw.items() if k not in _ITEM_KEYS and k not in RESULT_KEYS
        },
    )


def sample_to_json(s: Sample) -> dict[str, Any]:
    out: dict[str, Any] = {"text": s.text}
    for key in ("model", "variant", "note"):
        if getattr(s, key) is not None:
            out[key] = getattr(s, key)
    return out


def item_to_json(item: Item) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": item.id,
        "prompt": item.prompt,
        "response": item.response,
    }
    if item.samples:
        out["samples"] = [sample_to_json(s) for s in item.samples]
    return {**out, **item.extra}


def correction_to_json(c: Correction) -> dict[str, Any]:
    out: dict[str, Any] = {
        "start": c.start,
        "end": c.end,
        "text": c.text,
        "correction": c.correction,
    }
    if c.summary is not None:
        out["summary"] = c.summary
    return out


def _corrections(raw: Any) -> tuple[Correction, ...]:
    if not isinstance(raw, list):
        raise ValueError("field 'corrections' must be a list")
    out = []
    for i, entry in enumerate(raw):
        where = f"corrections[{i}]"
        if not isinstance(entry, dict):
            raise ValueError(f"{where} must be an object")
        start, end = entry.get("start"), entry.get("end")
        if type(start) is not int or type(end) is not int:
            raise ValueError(f"{where}: 'start' and 'end' must be integers")
        text, correction = entry.get("text"), entry.get("correction")
        if not isinstance(text, str) or not isinstance(correction, str):
            raise ValueError(f"{where}: 'text' and 'correction' must be strings")
        out.append(
            Correction(
                start, end, text, correction, _optional_text(entry, "summary", where)
            )
        )
    return tuple(out)


def item_document(item: Item) -> Document:
    """The item as a document: the response its text; the prompt, the samples
    (as :func:`sample_to_json` writes them), the corrections when there are
    any and the line's other fields (``extra``, when it has any) in
    ``metadata``."""
    metadata: dict[str, Any] = {
        "prompt": item.prompt,
        "samples": [sample_to_json(s) for s in item.samples],
    }
    if item.corrections:
        metadata["corrections"] = [correction_to_json(c) for c in item.corrections]
    if item.extra:
        metadata["extra"] = item.extra
    return Document(id=item.id, text=item.response, metadata=metadata)


def item_from_document(document: Document) -> Item:
    """The item :func:`item_document` made, exactly. A document without
    that metadata (a plain text uploaded to a consistency project) is a
    response with no prompt and no samples.

    Raises:
        ValueError: the metadata's samples or corrections are malformed, named.
    """
    meta = document.metadata or {}
    raw = meta.get("samples")
    extra = meta.get("extra")
    return Item(
        id=document.id,
        prompt=str(meta.get("prompt") or ""),
        response=document.text,
        samples=_samples(raw) if raw else (),
        extra=dict(extra) if isinstance(extra, dict) else {},
        corrections=_corrections(meta.get("corrections") or []),
    )


def _score(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def block_to_json(b: Block) -> dict[str, Any]:
    out: dict[str, Any] = {
        "start": b.start,
        "end": b.end,
        "text": b.text,
        "score": _score(b.score),
        "label": b.label,
        "judgements": [
            {"sample": j.sample, "label": j.label, "evidence": j.evidence}
            for j in b.judgements
        ],
    }
    if b.summary is not None:
        out["summary"] = b.summary
    if b.correction is not None:
        out["correction"] = b.correction
    return out


def result_to_json(r: ItemResult) -> dict[str, Any]:
    """One output line: the item with its samples, then the check."""
    out = {
        **item_to_json(r.item),
        "blocks": [block_to_json(b) for b in r.blocks],
        "score": _score(r.score),
        "label": r.label,
    }
    if r.corrected is not None:
        out["corrected"] = r.corrected
    if r.improved is not None:
        out["improved"] = {
            "text": r.improved.text,
            "explanation": r.improved.explanation,
        }
    if r.notes:
        out["notes"] = list(r.notes)
    out["usage"] = r.usage
    return out

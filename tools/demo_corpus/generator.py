"""The corpus: documents drawn style by style, each given to a fake LLM in
turn, and the files they are written to."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.jsonl import (
    claim_to_json,
    document_to_json,
    label_to_json,
    write_jsonl,
)
from pipeline.types import Claim, Document, Label

from .builder import Builder, Mention
from .fake_llm import DocumentPredictor
from .irb import facts, irb_header, narrative, tabular
from .spec import (
    DEFAULT_TYPES,
    HELD_OUT_STYLES,
    MODELS,
    STYLES,
    TRIBUNAL_TYPES,
    demo_schema,
    tribunal_schema,
)
from .tribunal import tribunal_decision

_IRB_LAYOUTS = {"irb_header": irb_header, "narrative": narrative, "tabular": tabular}


@dataclass(frozen=True)
class Corpus:
    """Documents, their claims, gold labels and the schema they follow."""

    documents: list[Document]
    claims: list[Claim]
    labels: list[Label]
    schema: dict[str, Any] = field(default_factory=dict)


def _make_document(
    style: str, rng: random.Random
) -> tuple[str, list[Mention], tuple[str, ...]]:
    ocr_rate = 0.0 if rng.random() < 0.6 else rng.choice((0.05, 0.1, 0.2))
    b = Builder(rng, ocr_rate)
    if style == "tribunal":
        tribunal_decision(b, rng)
        return b.text(), b.mentions, TRIBUNAL_TYPES
    f = facts(rng)
    _IRB_LAYOUTS[style](b, f, rng)
    return b.text(), b.mentions, DEFAULT_TYPES


def generate_corpus(
    *,
    docs: int = 200,
    seed: int = 0,
    styles: Sequence[str] | None = None,
    id_prefix: str = "demo",
) -> Corpus:
    """Generate a reproducible demo corpus.

    Args:
        docs: how many documents.
        seed: the same seed (and styles) gives byte-identical output.
        styles: document layouts to draw from; default :data:`STYLES`. The
            held-out ``"tribunal"`` style appears only when named here.
        id_prefix: starts every document id (``demo-0007``), so that two
            corpora can be checked together.

    Returns:
        A :class:`Corpus` whose schema covers every style drawn from.

    Raises:
        ValueError: an unknown style or a negative ``docs``.
    """
    chosen = tuple(styles) if styles is not None else STYLES
    unknown = [s for s in chosen if s not in STYLES + HELD_OUT_STYLES]
    if unknown or not chosen:
        raise ValueError(
            f"unknown styles {unknown}; pick from {STYLES + HELD_OUT_STYLES}"
        )
    if docs < 0:
        raise ValueError("docs must be >= 0")
    models = tuple(MODELS)
    documents, claims, labels = [], [], []
    for i in range(docs):
        rng = random.Random(f"safepassage-demo:{seed}:{','.join(chosen)}:{i}")
        style = rng.choice(chosen)
        model = models[i % len(models)]
        text, mentions, targets = _make_document(style, rng)
        doc_id = f"{id_prefix}-{i:04d}"
        documents.append(
            Document(id=doc_id, text=text, metadata={"style": style, "model": model})
        )
        predictor = DocumentPredictor(text, mentions, targets, MODELS[model], rng)
        p, lab = predictor.predict(doc_id, model)
        claims += p
        labels += lab
    return Corpus(documents, claims, labels, _schema_for(chosen))


def _schema_for(styles: Sequence[str]) -> dict[str, Any]:
    default = any(s in STYLES for s in styles)
    tribunal = "tribunal" in styles
    if default and not tribunal:
        return demo_schema()
    if tribunal and not default:
        return tribunal_schema()
    merged = demo_schema()
    merged["name"] = "asylex-and-tribunal-demo"
    merged["entity_types"] = {
        **tribunal_schema()["entity_types"],
        **merged["entity_types"],
    }
    return merged


def write_corpus(corpus: Corpus, out_dir: str | Path) -> dict[str, Path]:
    """Write documents.jsonl, claims.jsonl, labels.jsonl and schema.json.

    Returns:
        The path of each file, keyed ``documents``, ``claims``, ``labels``,
        ``schema``.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "documents": out / "documents.jsonl",
        "claims": out / "claims.jsonl",
        "labels": out / "labels.jsonl",
        "schema": out / "schema.json",
    }
    write_jsonl(paths["documents"], map(document_to_json, corpus.documents))
    write_jsonl(paths["claims"], map(claim_to_json, corpus.claims))
    write_jsonl(paths["labels"], map(label_to_json, corpus.labels))
    paths["schema"].write_text(
        json.dumps(corpus.schema, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
    )
    return paths

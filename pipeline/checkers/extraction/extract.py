"""Step 1 of the pipeline: an LLM extracts typed entities with their context.

The prompt is the paper's Appendix A with the project's entity types filled
in; the answer is strict structured output (:func:`build_json_schema`)::

    {"entities": [{"type": "HearingDate",
                   "value": {"yyyy": "2012", "mm": "01", "dd": "17"},
                   "raw": "January 17, 2012",
                   "context": "heard on January 17, 2012 in Toronto"}]}

Long documents are split into overlapping chunks; an entity found in two
chunks (same type, value and context) is kept once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ...errors import SchemaError
from ...llm import Client, LLMConfig, LLMError, Usage, chat_json
from ...types import Claim, Document
from .hypothesis import render_hypothesis, type_display_name
from .schema import EntityType, Schema

#: Characters per chunk: about 3,000 tokens, which fits small local models.
DEFAULT_MAX_CHARS = 12_000
#: Characters repeated between chunks; a context (entity plus a few words)
#: cut by one chunk boundary lies whole in the next chunk.
DEFAULT_OVERLAP = 400

_NULL = {"type": "null"}
_STRING = {"type": "string"}


@dataclass(frozen=True)
class ExtractionResult:
    """What extraction produced for one document.

    ``error`` is set when any chunk failed; ``claims`` is then empty
    (a document is extracted whole or not at all) and ``usage`` still counts
    what the failed attempt spent.
    """

    document_id: str
    claims: list[Claim] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [schema, _NULL]}


def _value_schema(spec: EntityType) -> dict[str, Any]:
    if spec.fields:
        return _nullable(
            {
                "type": "object",
                "properties": {
                    name: {**_nullable(_STRING), **({"description": d} if d else {})}
                    for name, d in spec.fields.items()
                },
                "required": list(spec.fields),
                "additionalProperties": False,
            }
        )
    if spec.enum:
        return _nullable({"type": "string", "enum": list(spec.enum)})
    return _nullable(_STRING)


def _entity_schema(spec: EntityType) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "type": {"type": "string", "enum": [spec.name]},
            "value": _value_schema(spec),
            "raw": {**_nullable(_STRING), "description": "the text as written"},
            "context": {
                "type": "string",
                "description": "a substring copied exactly from the document",
            },
        },
        "required": ["type", "value", "raw", "context"],
        "additionalProperties": False,
    }


def build_json_schema(schema: Schema) -> dict[str, Any]:
    """The strict structured-output schema for ``schema``'s entity types.

    ``{"entities": [entity, ...]}`` where each entity is one of a branch per
    type (``anyOf``), so each type is bound to its own value shape: an object
    of nullable string fields, one of the enum values, or a string; ``null``
    where the value cannot be normalised. Every object lists all its
    properties as required with ``additionalProperties: false``, as OpenAI's
    strict mode demands; vLLM, Ollama and llama.cpp accept the same schema.

    Raises:
        SchemaError: the schema has no entity types.
    """
    if not schema.entity_types:
        raise SchemaError(f"schema {schema.name!r} has no entity types")
    branches = [_entity_schema(spec) for spec in schema.entity_types.values()]
    return {
        "type": "object",
        "properties": {
            "entities": {
                "type": "array",
                "items": branches[0] if len(branches) == 1 else {"anyOf": branches},
            }
        },
        "required": ["entities"],
        "additionalProperties": False,
    }


def _describe_type(spec: EntityType, schema: Schema) -> list[str]:
    shown = type_display_name(spec.name, schema)
    head = spec.name if shown == spec.name else f"{spec.name} ({shown})"
    lines = [f"  - {head}: {spec.description}" if spec.description else f"  - {head}"]
    if spec.fields:
        parts = ", ".join(f"{k} ({d})" if d else k for k, d in spec.fields.items())
        lines.append(
            f"    value: an object with the fields {parts}; null for a field the "
            "text does not give"
        )
    elif spec.enum:
        lines.append("    value: one of " + ", ".join(f'"{v}"' for v in spec.enum))
    else:
        lines.append("    value: a string")
    return lines


# Appendix A, with the ASYLEX types replaced by the schema's and the paper's
# per-type arrays by one "entities" list. Its opening "checklist" step is left
# out: under structured output the model can emit nothing but the JSON.
_PROMPT_HEAD = """\
<role_and_objective>
You are an entity information extractor.
Your task is to systematically identify and extract specified entity types
from the provided text.
</role_and_objective>

<instructions>
- Identify and extract all instances of the following entity types:
"""

_PROMPT_TAIL = """\
- For each detected entity instance, provide:
  - type: the entity type name exactly as listed above
  - value: the normalized value (e.g., date parts, standardized organization
    name, one of the allowed values), or null if normalization is not possible
  - raw: the string exactly as found in the text
  - context: a substring from the source that provides proof for the entity
- If multiple instances of an entity are detected, list each instance as a
  separate object in the "entities" array.
- If no instances are found for an entity type, include no object for it.
- For incomplete or ambiguous information, set value to null, but still
  provide the raw string and context for traceability.
</instructions>

<output_format>
Return results as a JSON object structured as a list of entities.
Ensure the output strictly matches the required JSON schema.
</output_format>

<reasoning_steps>
Think step by step internally when extracting and normalizing entities. Do not
reveal stepwise reasoning in output unless specifically asked.
</reasoning_steps>

<validation>
After entity extraction, validate that each entity has a type from the list
above and that its fields conform to the Output Format. If validation fails,
self-correct and output the revised JSON.
</validation>

<verbosity>
- Output should be concise, with no extraneous explanations.
- Context field should be minimal but sufficient (entity plus one or two
  neighboring words).
</verbosity>

<stop_conditions>
- Return the structured JSON as soon as all entity extraction is completed and
  validated.
</stop_conditions>

<notes>
- Do not include any information or commentary outside the required JSON
  output.
- When in doubt regarding normalization, prioritize transparency by including
  the raw string and context but flagging normalization as null where
  appropriate.
</notes>
"""


def build_prompt(schema: Schema) -> str:
    """The system prompt (paper Appendix A) for ``schema``.

    Lists every entity type with its display name, description and value
    shape (fields or allowed values); ``schema.instructions`` is appended.

    Raises:
        SchemaError: the schema has no entity types.
    """
    if not schema.entity_types:
        raise SchemaError(f"schema {schema.name!r} has no entity types")
    lines = [
        line
        for spec in schema.entity_types.values()
        for line in _describe_type(spec, schema)
    ]
    prompt = _PROMPT_HEAD + "\n".join(lines) + "\n" + _PROMPT_TAIL
    if schema.instructions.strip():
        prompt += (
            "\n<additional_instructions>\n"
            f"{schema.instructions.strip()}\n"
            "</additional_instructions>\n"
        )
    return prompt


_PARAGRAPH = re.compile(r"\n\s*\n")
_LINE = re.compile(r"\n")
_SENTENCE = re.compile(r"[.!?;:][\"')\]]*\s+")
_SPACE = re.compile(r"\s+")
_BOUNDARIES = (_PARAGRAPH, _LINE, _SENTENCE, _SPACE)


def _last_break(text: str, lo: int, hi: int) -> int:
    """The latest boundary in ``text[lo:hi]``, preferring paragraphs."""
    for pattern in _BOUNDARIES:
        ends = [m.end() for m in pattern.finditer(text, lo, hi)]
        if ends:
            return ends[-1]
    return hi


def _first_start(text: str, lo: int, hi: int) -> int:
    """The earliest boundary in ``text[lo:hi]``, preferring sentences."""
    for pattern in (_PARAGRAPH, _SENTENCE, _LINE, _SPACE):
        match = pattern.search(text, lo, hi)
        if match and match.end() < hi:
            return match.end()
    return lo


def split_document(
    text: str, *, max_chars: int = DEFAULT_MAX_CHARS, overlap: int = DEFAULT_OVERLAP
) -> list[str]:
    """Split ``text`` into chunks of at most ``max_chars`` that overlap.

    A chunk ends at the last paragraph break in its second half, else the
    last line break, sentence end or space (a hard cut only for text without
    any). The next chunk starts up to ``overlap`` characters earlier, at the
    first sentence (else word) start in that window, so a context cut by the
    boundary appears whole in one of the two chunks.

    Raises:
        ValueError: ``max_chars`` is not positive or ``overlap`` is not below
            half of it.
    """
    if max_chars <= 0:
        raise ValueError("max_chars must be positive")
    if not 0 <= overlap < max_chars // 2:
        raise ValueError("overlap must be at least 0 and below max_chars / 2")
    chunks = []
    start = 0
    while len(text) - start > max_chars:
        end = _last_break(text, start + max_chars // 2, start + max_chars)
        chunks.append(text[start:end])
        # end > start + max_chars / 2 > overlap, so every chunk moves forward.
        start = _first_start(text, end - overlap, end) if overlap else end
    chunks.append(text[start:])
    return chunks


def _normalise(text: str) -> str:
    return " ".join(text.split()).casefold()


def _user_message(chunk: str, part: int, parts: int) -> str:
    where = f' part="{part} of {parts}"' if parts > 1 else ""
    return f"<document{where}>\n{chunk}\n</document>"


def extract_document(
    client: Client,
    config: LLMConfig,
    document: Document,
    schema: Schema,
    *,
    max_chars: int = DEFAULT_MAX_CHARS,
    overlap: int = DEFAULT_OVERLAP,
) -> ExtractionResult:
    """Extract ``schema``'s entities from one document.

    Never raises for the document's own failure (server error after retries,
    JSON still unusable after the repair attempt): the result's ``error``
    says what went wrong.

    Args:
        client: from :func:`pipeline.llm.make_client`.
        config: model and request settings; ``config.model`` is recorded on
            every claim.
        document: the text to read.
        schema: which entity types to extract.
        max_chars: chunk size for long documents (see :func:`split_document`).
        overlap: characters shared by neighbouring chunks.

    Returns:
        Claims in document order with ids ``"{document_id}:{model}:{n}"``
        (``n`` counts from 0), duplicates from overlapping chunks merged.

    Raises:
        SchemaError: the schema has no entity types.
        ValueError: bad ``max_chars`` / ``overlap``.
    """
    json_schema = build_json_schema(schema)
    system = {"role": "system", "content": build_prompt(schema)}
    chunks = split_document(document.text, max_chars=max_chars, overlap=overlap)
    usage = Usage()
    entities: list[dict[str, Any]] = []
    for part, chunk in enumerate(chunks, start=1):
        messages = [
            system,
            {"role": "user", "content": _user_message(chunk, part, len(chunks))},
        ]
        try:
            answer, spent = chat_json(
                client, config, messages, json_schema, name="entities"
            )
        except LLMError as e:
            where = f" (chunk {part} of {len(chunks)})" if len(chunks) > 1 else ""
            return ExtractionResult(document.id, [], usage + e.usage, f"{e}{where}")
        usage += spent
        entities.extend(answer["entities"])

    claims: list[Claim] = []
    seen = set()
    for entity in entities:
        key = (
            entity["type"],
            render_hypothesis(entity["type"], entity["value"], schema=schema),
            _normalise(entity["context"]),
        )
        if key in seen:
            continue
        seen.add(key)
        raw = entity.get("raw")
        claims.append(
            Claim(
                id=f"{document.id}:{config.model}:{len(claims)}",
                document_id=document.id,
                type=entity["type"],
                value=entity["value"],
                context=entity["context"],
                model=config.model,
                extra={"raw": raw} if raw is not None else {},
            )
        )
    return ExtractionResult(document.id, claims, usage)


def extract_documents(
    client: Client,
    config: LLMConfig,
    documents: Iterable[Document],
    schema: Schema,
    *,
    max_chars: int = DEFAULT_MAX_CHARS,
    overlap: int = DEFAULT_OVERLAP,
    progress: bool = False,
) -> tuple[list[ExtractionResult], Usage]:
    """Run :func:`extract_document` over ``documents``, one after another.

    A document that fails gets a result with ``error`` set; the others go on.

    Args:
        progress: show a tqdm bar (with tokens used and failures so far).

    Returns:
        One result per document, in input order, and the total usage.
    """
    bar = None
    if progress:
        from tqdm import tqdm

        documents = bar = tqdm(documents, desc="extracting", unit="doc")
    results = []
    total = Usage()
    failed = 0
    for document in documents:
        result = extract_document(
            client, config, document, schema, max_chars=max_chars, overlap=overlap
        )
        results.append(result)
        total += result.usage
        failed += not result.ok
        if bar is not None:
            bar.set_postfix(tokens=total.total_tokens, failed=failed)
    return results, total

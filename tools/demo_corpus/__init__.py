"""A synthetic ASYLEX-like corpus: documents, LLM-style claims, gold labels.

The documents imitate Canadian Immigration and Refugee Board decisions (the
paper's ASYLEX setting) in several layouts; the claims imitate what
black-box LLMs return for them, including the mistakes of the paper's Table 2;
the labels say which claims are safe passages. Tests, the demo and the
quality benchmark use it, so it is seeded and byte-for-byte reproducible and
uses nothing but :mod:`random`.

Every claim carries ``extra["kind"]`` naming what the fake LLM did:

SAFE (the context is in the document, near-verbatim, and supports the value)
    exact            copied verbatim: the entity plus one or two neighbouring words
    case             letter case changed
    ocr_split        one space inserted inside a word, or a scan's split word mended
    inserted_tokens  one word of the document left out of the context
    elided_tokens    a run of words (often another date) skipped
    translation      one word swapped for its French/English cognate
    whitespace       line breaks, tabs and runs of spaces collapsed to one space
UNSAFE
    hallucinated_context  a plausible sentence that is not in the document
    bad_grounding         real text from the document that does not support the value
    incorrect_entity      a real span of another kind (claimant named as judge,
                          decision date as hearing date, "IAD File No." as an
                          organisation)
    wrong_value           the right context with a different value (a day off,
                          day and month swapped, another country, Public/Private
                          swapped)

Unsafe claims other than hallucinations may also carry
``extra["mistranscription"]`` naming a surface change made to their context.
Mistranscribed contexts keep matches / alignment length well above 0.6.

Document ids are ``demo-0000``, ``demo-0001``, ... for every seed: mixing
corpora made with different seeds needs the caller to rename them. Document
``i`` depends only on ``seed`` and ``i`` (not on ``docs``), so a larger corpus
extends a smaller one with the same seed and styles.
"""

from .generator import Corpus, generate_corpus, write_corpus
from .spec import (
    DEFAULT_TYPES,
    HELD_OUT_STYLES,
    MISTRANSCRIPTION_KINDS,
    MODELS,
    SAFE_KINDS,
    STYLES,
    TRIBUNAL_TYPES,
    UNSAFE_KINDS,
    ModelProfile,
    demo_schema,
    tribunal_schema,
)

__all__ = [
    "DEFAULT_TYPES",
    "HELD_OUT_STYLES",
    "MISTRANSCRIPTION_KINDS",
    "MODELS",
    "SAFE_KINDS",
    "STYLES",
    "TRIBUNAL_TYPES",
    "UNSAFE_KINDS",
    "Corpus",
    "ModelProfile",
    "demo_schema",
    "generate_corpus",
    "tribunal_schema",
    "write_corpus",
]

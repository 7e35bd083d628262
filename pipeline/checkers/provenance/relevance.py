"""How relevant each context item is to a claim (paper 3.1).

The paper scores (query, item) with a cross-encoder reranker. By default we
use the packaged all-MiniLM-L6-v2 as a bi-encoder instead: every text is
embedded once, and cosine similarity ranks (appendix A.3: cosine beats the
raw dot product). Either scorer returns logits that
:func:`~.select.softmax` turns into a distribution.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Protocol

from ...errors import ScorerError
from ...score import (
    DEFAULT_BASE_MODEL,
    bf16_on,
    load_cross_encoder,
    padded_batches,
    quantize_int8,
    resolve_model,
)
from .limits import DEADLINE_SLICE, in_time

#: all-MiniLM-L6-v2 was trained contrastively with similarities scaled by 20,
#: so softmax(20 * cosine) is the distribution it learned; unscaled cosines
#: (0.1-0.7) would make every item about equally likely.
COSINE_SCALE = 20.0
#: Texts tokenised at a time: their token ids are held until embedded.
ENCODE_CHUNK = 4096


class Relevance(Protocol):
    name: str

    def logits(
        self,
        claims: Sequence[str],
        candidates: Sequence[Sequence[str]],
        *,
        deadline: float | None = None,
    ) -> list[list[float]]:
        """For each claim, a relevance logit for each of its candidates.

        Raises:
            DeadlineExceeded: ``deadline`` (a ``time.monotonic()``) passed,
                looked at every DEADLINE_SLICE texts a model reads.
        """
        ...


class BiEncoderRelevance:
    """Cosine similarity of sentence embeddings, times ``scale``.

    Args:
        model: a sentence-transformers model folder or hub name; the default
            is the packaged all-MiniLM-L6-v2.
        quantize: dynamic int8 quantisation of the linear layers (CPU).
        bf16: compute in bfloat16 on the CPU; ``None``: as
            :class:`~pipeline.score.NLIScorer` decides it (where the CPU
            computes it natively and no int8 is asked for).
    """

    def __init__(
        self,
        model: str = DEFAULT_BASE_MODEL,
        *,
        device: str | None = None,
        scale: float = COSINE_SCALE,
        batch_size: int = 32,
        quantize: bool = False,
        bf16: bool | None = None,
    ):
        from sentence_transformers import SentenceTransformer

        path = resolve_model(model)
        try:
            self._model = SentenceTransformer(path, device=device)
        except (OSError, ValueError) as e:
            raise ScorerError(f"cannot load sentence embedder {model!r}: {e}") from e
        if quantize:
            self._model = quantize_int8(self._model)
        self.bf16 = bf16_on(str(self._model.device), quantize=quantize, asked=bf16)
        self.scale = scale
        self.batch_size = batch_size
        self.name = f"cosine:{model}"

    def logits(
        self,
        claims: Sequence[str],
        candidates: Sequence[Sequence[str]],
        *,
        deadline: float | None = None,
    ) -> list[list[float]]:
        texts = list(dict.fromkeys([*claims, *(t for ts in candidates for t in ts)]))
        if not texts:
            return [[] for _ in claims]
        vectors = self._encode(texts, deadline=deadline)
        row = {t: i for i, t in enumerate(texts)}
        return [
            (vectors[[row[t] for t in ts]] @ vectors[row[c]] * self.scale).tolist()
            if ts
            else []
            for c, ts in zip(claims, candidates, strict=True)
        ]

    def _encode(self, texts: list[str], *, deadline: float | None = None):
        """Unit vectors of ``texts``, one row each.

        Each chunk is tokenised once and batched by token length
        (:func:`~pipeline.score.padded_batches`): ``encode()`` tokenises
        every batch anew and orders by characters, which took a fifth more
        time on the throughput items of ``bench/bench_provenance.py``. The
        model's own modules (pooling, normalising) read each batch.
        """
        import numpy as np
        import torch

        size = (
            self.batch_size
            if deadline is None
            else min(self.batch_size, DEADLINE_SLICE)
        )
        tokenizer = self._model.tokenizer
        rows: list[int] = []
        parts = []
        with (
            torch.inference_mode(),
            torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.bf16),
        ):
            for first in range(0, len(texts), ENCODE_CHUNK):
                chunk = range(first, min(first + ENCODE_CHUNK, len(texts)))
                encoded = tokenizer(
                    [texts[i].strip() for i in chunk],
                    truncation=True,
                    max_length=self._model.max_seq_length,
                )
                for batch, features in padded_batches(
                    tokenizer, encoded, size=size, device=self._model.device
                ):
                    embedded = self._model(dict(features))["sentence_embedding"]
                    unit = torch.nn.functional.normalize(embedded.float(), dim=-1)
                    rows.extend(first + i for i in batch)
                    parts.append(unit.cpu().numpy())
                    in_time(deadline, "ranking")
        vectors = np.empty((len(texts), parts[0].shape[1]), np.float32)
        vectors[rows] = np.concatenate(parts)
        return vectors


class CrossEncoderRelevance:
    """A reranker cross-encoder's raw score of each (claim, item) pair, as in
    the paper (``mixedbread-ai/mxbai-rerank-base-v1`` there)."""

    def __init__(self, model: str, *, device: str | None = None, batch_size: int = 32):
        self._encoder = load_cross_encoder(
            model, num_labels=None, max_length=256, device=device
        )
        self.batch_size = batch_size
        self.name = f"rerank:{model}"

    def logits(
        self,
        claims: Sequence[str],
        candidates: Sequence[Sequence[str]],
        *,
        deadline: float | None = None,
    ) -> list[list[float]]:
        pairs = [(c, t) for c, ts in zip(claims, candidates, strict=True) for t in ts]
        if not pairs:
            return [[] for _ in claims]
        step = len(pairs) if deadline is None else DEADLINE_SLICE
        flat = []
        for at in range(0, len(pairs), step):
            flat.extend(
                self._encoder.predict(
                    pairs[at : at + step],
                    batch_size=self.batch_size,
                    activation_fn=_identity,
                    convert_to_numpy=True,
                ).tolist()
            )
            in_time(deadline, "ranking")
        out, at = [], 0
        for ts in candidates:
            out.append(flat[at : at + len(ts)])
            at += len(ts)
        return out


def _identity(x):
    return x


class LexicalRelevance:
    """Okapi BM25 of each item against the claim's words: no model, so a
    check costs only the NLI scorer (the fast option; the bi-encoder also
    ranks paraphrases). Document frequencies are counted over every
    candidate of the call, so a batch ranks with corpus-wide weights.
    """

    name = "bm25"

    def __init__(self, *, k1: float = 1.2, b: float = 0.75):
        self.k1, self.b = k1, b

    def logits(
        self,
        claims: Sequence[str],
        candidates: Sequence[Sequence[str]],
        *,
        deadline: float | None = None,
    ) -> list[list[float]]:
        docs = [[_terms(t) for t in ts] for ts in candidates]
        flat = [d for ds in docs for d in ds]
        if not flat:
            return [[] for _ in claims]
        df = Counter(w for d in flat for w in set(d))
        n, mean = len(flat), sum(map(len, flat)) / len(flat) or 1.0
        idf = {w: math.log(1 + (n - f + 0.5) / (f + 0.5)) for w, f in df.items()}
        out = []
        for claim, ds in zip(claims, docs, strict=True):
            words = set(_terms(claim))
            scores = []
            for d in ds:
                tf = Counter(d)
                norm = self.k1 * (1 - self.b + self.b * len(d) / mean)
                scores.append(
                    sum(
                        idf[w] * tf[w] * (self.k1 + 1) / (tf[w] + norm)
                        for w in words
                        if w in tf
                    )
                )
            out.append(scores)
            in_time(deadline, "ranking")
        return out


_TERM = re.compile(r"\w+")
#: Words too common to say which item a claim is about (the claim prompt's
#: own words among them).
_STOPWORDS = frozenset(
    "a an and are as at be by for from has have he her his in is it its of on or"
    " she that the their they this to was were which who with answer question"
    " what when where".split()
)


def _terms(text: str) -> list[str]:
    return [w for w in _TERM.findall(text.lower()) if w not in _STOPWORDS]

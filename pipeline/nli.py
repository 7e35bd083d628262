"""An entailment base: a cross-encoder fine-tuned on human-labelled NLI
pairs, so that a scorer reads entailment before its first silver pair or
expert label (the packaged MiniLM never learned it).

Pairs come in the shared format (``{"premise", "hypothesis", "label",
"source"}``) or as SNLI / MultiNLI JSONL (``{"sentence1", "sentence2",
"gold_label"}``). The head is two-way, p(entailment): the form every scorer
here trains and reads, where neutral and contradiction both mean "does not
support". A share of each source's premises is held out by a sha256 digest
(every run splits alike, and no premise sits on both sides), and whole
sources may be held out too; accuracy and ROC AUC on the held-out pairs,
per source, are measured for the base before training and after.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from . import __version__
from .build_cache import build_key, code_of, model_identity
from .checkers.base import Example
from .errors import InputError, TrainingError
from .evaluate import roc_auc
from .score import METADATA_FILE
from .train import Dataset, ProgressCallback, TrainConfig, Trainer

#: One pass over the pairs; NLI sets are large enough that a second pass
#: buys little on a CPU budget.
NLI_CONFIG = TrainConfig(stages=("nli",), silver_epochs=1, max_length=160)
#: Share of each source's premises kept out of training to measure on.
HELD_OUT_SHARE = 0.1
#: Share of the training premises that early stopping reads.
VALIDATION_SHARE = 0.05
_ENTAILS = {"entailment": True, "entails": True, "supports": True}
_NOT = {"neutral", "contradiction", "not_entailment", "refutes"}


@dataclass(frozen=True)
class NLIPair:
    premise: str
    hypothesis: str
    entails: bool
    source: str


def _pair_text(value: Any, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{name} (or sentence1/sentence2) must be a non-empty string")
    return value


def nli_pair_from_json(raw: Any, *, source: str = "") -> NLIPair:
    """One pair from either format.

    Raises:
        ValueError: not an object, a text missing, or a label that is not an
            NLI label (SNLI's ``"-"``, no annotator majority, included).
    """
    if not isinstance(raw, dict):
        raise ValueError("an NLI pair must be a JSON object")
    premise = _pair_text(raw.get("premise", raw.get("sentence1")), "premise")
    hypothesis = _pair_text(raw.get("hypothesis", raw.get("sentence2")), "hypothesis")
    label = raw.get("label", raw.get("gold_label"))
    if not isinstance(label, str) or label.lower() not in _ENTAILS.keys() | _NOT:
        raise ValueError(
            f"label {label!r} is not one of entailment, neutral, contradiction,"
            " not_entailment"
        )
    return NLIPair(
        premise=premise,
        hypothesis=hypothesis,
        entails=label.lower() in _ENTAILS,
        source=str(raw.get("source") or source),
    )


def read_nli_pairs(
    paths: Sequence[str | Path],
) -> tuple[list[NLIPair], list[InputError]]:
    """Every pair of the files, and the lines that are not pairs. A file's
    pairs without a ``source`` take the file's name as their source."""
    from .jsonl import iter_jsonl_lines

    pairs: list[NLIPair] = []
    errors: list[InputError] = []
    for path in paths:
        for number, value in iter_jsonl_lines(path):
            if isinstance(value, InputError):
                errors.append(value)
                continue
            try:
                pairs.append(nli_pair_from_json(value, source=Path(path).stem))
            except ValueError as e:
                errors.append(InputError(str(e), path=str(path), line=number))
    return pairs, errors


def _share(text: str, salt: str) -> float:
    digest = hashlib.sha256(f"{salt}\0{text}".encode()).hexdigest()
    return int(digest[:12], 16) / 16**12


def split_pairs(
    pairs: Iterable[NLIPair],
    *,
    held_out_sources: Iterable[str] = (),
    held_out_share: float = HELD_OUT_SHARE,
) -> tuple[list[NLIPair], list[NLIPair]]:
    """(training pairs, held-out pairs): a premise's pairs stay together."""
    whole = set(held_out_sources)
    train: list[NLIPair] = []
    held: list[NLIPair] = []
    for p in pairs:
        out = p.source in whole or _share(p.premise, "held-out") < held_out_share
        (held if out else train).append(p)
    return train, held


def limited(pairs: Sequence[NLIPair], limit: int | None) -> list[NLIPair]:
    """At most ``limit`` pairs, the same ones every run, sources kept in
    proportion (the pairs with the lowest digests)."""
    if limit is None or len(pairs) <= limit:
        return list(pairs)
    return sorted(
        pairs, key=lambda p: _share(p.premise + "\0" + p.hypothesis, "limit")
    )[:limit]


def training_examples(pairs: Sequence[NLIPair], n: int) -> list[Example]:
    """``n`` pairs to mix into another training run (the starter's): from
    the training side of :func:`split_pairs`, so the held-out figures stay
    unseen, sources in proportion, the same ones every run."""
    train, _ = split_pairs(pairs)
    return [_example(p) for p in limited(train, n)]


def _example(p: NLIPair) -> Example:
    return Example(
        p.premise, p.hypothesis, p.entails, p.premise[:200], f"nli:{p.source}"
    )


def per_source(scores: Sequence[float], pairs: Sequence[NLIPair]) -> dict[str, dict]:
    """Accuracy (entails when p >= 0.5) and ROC AUC of each source's pairs."""
    out: dict[str, dict] = {}
    for source in sorted({p.source for p in pairs}):
        rows = [
            (s, p.entails)
            for s, p in zip(scores, pairs, strict=True)
            if p.source == source
        ]
        auc = roc_auc([s for s, _ in rows], [e for _, e in rows])
        out[source] = {
            "n": len(rows),
            "accuracy": round(sum((s >= 0.5) == e for s, e in rows) / len(rows), 4),
            "roc_auc": None if auc is None else round(auc, 4),
        }
    return out


#: The library code an entailment base's training runs through beside this
#: module: part of its recipe.
_TRAINING_CODE = ("pipeline.evaluate", "pipeline.score", "pipeline.train")


def nli_key(
    paths: Sequence[str | Path],
    *,
    config: TrainConfig = NLI_CONFIG,
    held_out_sources: Iterable[str] = (),
    limit: int | None = None,
) -> str:
    """The build key (:func:`pipeline.build_cache.build_key`) of the base
    :func:`train_nli` trains on the pairs of these files: this module and
    the training code it runs through, the settings, the base it starts from
    and the files' bytes. Where it trains is not what it learns: the device
    is left out."""
    config = replace(config, base=model_identity(config.base), device=None)
    return build_key(
        recipe=[__file__, *code_of(*_TRAINING_CODE)],
        settings={
            "config": asdict(config),
            "held_out_sources": sorted(set(held_out_sources)),
            "limit": limit,
        },
        inputs={"pairs": paths},
    )


def train_nli(
    pairs: Sequence[NLIPair],
    out_dir: str | Path,
    *,
    config: TrainConfig = NLI_CONFIG,
    held_out_sources: Iterable[str] = (),
    limit: int | None = None,
    on_progress: ProgressCallback | None = None,
) -> dict[str, Any]:
    """Fine-tune ``config.base`` on the training pairs and save it.

    Returns:
        The metadata written beside the model: per-source figures on the
        held-out pairs before and after training, pair counts, time.

    Raises:
        TrainingError: no pair left to train on or to measure on.
    """
    started = time.monotonic()
    train, held = split_pairs(pairs, held_out_sources=held_out_sources)
    validation: list[NLIPair] = []
    rest: list[NLIPair] = []
    for p in limited(train, limit):
        early = _share(p.premise, "validation") < VALIDATION_SHARE
        (validation if early else rest).append(p)
    train = rest
    if not train or not validation or not held:
        raise TrainingError(
            f"too few NLI pairs: {len(train)} to train on, {len(validation)} to"
            f" validate on, {len(held)} held out"
        )
    trainer = Trainer(config, on_progress)
    held_examples = [_example(p) for p in held]
    before = per_source(trainer.scores(held_examples), held)
    data = Dataset(
        validation=[_example(p) for p in validation], validation_source="silver"
    )
    stage = trainer.fit("nli", [_example(p) for p in train], config.silver_epochs, data)
    after = per_source(trainer.scores(held_examples), held)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    trainer.encoder.save(str(out))
    metadata = {
        "name": out.name,
        "kind": "nli",
        "base_model": config.base,
        "pipeline_version": __version__,
        "threshold": 0.5,
        "pairs": {
            "train": len(train),
            "validation": len(validation),
            "held_out": len(held),
        },
        "held_out_sources": sorted(set(held_out_sources)),
        "held_out": {"before": before, "after": after},
        "stages": {"nli": stage},
        "config": asdict(replace(config, stages=("nli",))),
        "train_seconds": round(time.monotonic() - started, 1),
        "device": str(trainer.device),
    }
    text = json.dumps(metadata, indent=2)
    (out / METADATA_FILE).write_text(text, encoding="utf-8")
    return json.loads(text)

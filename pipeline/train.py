"""Fine-tuning the cross-encoder scorer of any checker: silver stage, then
human labels.

Paper 4.2: pre-train on silver labels, fine-tune on ~500 expert labels,
early-stop on validation F1 (flagging unsafe) and pick the decision threshold
on the same validation split. Splits are by document, so no document's
claims sit on both sides. What the scorer reads for each claim, and the silver
pairs, come from the checker (:class:`~pipeline.checkers.base.Checker`):
nothing here knows a kind of claim.
"""

from __future__ import annotations

import copy
import json
import math
import random
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from . import __version__
from .checkers.base import Checker, Example, Pair
from .errors import TrainingError
from .evaluate import best_threshold, flag_metrics, precision_threshold, rival_margin
from .score import (
    DEFAULT_BASE_MODEL,
    METADATA_FILE,
    Scorer,
    entailment_index,
    load_cross_encoder,
)
from .types import Label


@dataclass(frozen=True)
class TrainConfig:
    """Hyper-parameters; the defaults suit MiniLM on a 2-core CPU."""

    base: str = DEFAULT_BASE_MODEL
    stages: tuple[str, ...] = ("silver", "human")
    silver_epochs: int = 2
    human_epochs: int = 6
    patience: int = 2
    batch_size: int = 16
    learning_rate: float = 8e-5
    max_length: int = 128
    validation_share: float = 0.2
    silver_limit: int | None = 6000
    #: Without labels, the threshold flags claims whose silver pairs are
    #: unsafe this often (:func:`~pipeline.evaluate.precision_threshold`).
    silver_flag_precision: float = 0.9
    freeze_embeddings: bool = True
    #: Silver pairs mixed into the expert stage, per expert pair, so that it
    #: keeps what the silver stage taught instead of forgetting it on a few
    #: hundred labels (issue 16); 0 trains on the expert pairs alone.
    replay: float = 0.0
    #: Weight of the listwise term beside the pointwise one: the pairs of one
    #: premise share a batch, and each supported claim must outscore the
    #: unsupported ones about the same text (a softmax over them), so the
    #: scorer learns to rank a value against its competitors (the other
    #: role, another date of the line), not only to score it alone
    #: (issue 28); 0 trains pointwise only.
    listwise: float = 0.0
    device: str | None = None
    seed: int = 0


@dataclass(frozen=True)
class Progress:
    """What a training run reports after each step and each validation."""

    stage: str
    epoch: int
    step: int
    steps: int
    loss: float | None = None
    val_f1: float | None = None


#: Called after every step and validation. It may raise
#: :class:`~pipeline.errors.TrainingCancelled` (or any error) to stop training:
#: the error propagates out of :func:`train_scorer`, which then writes nothing.
ProgressCallback = Callable[[Progress], None]


class ProgressBars:
    """A :data:`ProgressCallback` drawing one tqdm bar per training stage."""

    def __init__(self) -> None:
        self.bars: dict[str, Any] = {}

    def __call__(self, progress: Progress) -> None:
        from tqdm import tqdm

        bar = self.bars.get(progress.stage)
        if bar is None:
            bar = self.bars[progress.stage] = tqdm(
                total=progress.steps, desc=f"training ({progress.stage})", unit="step"
            )
        bar.n = progress.step
        if progress.loss is not None:
            bar.set_postfix(loss=f"{progress.loss:.3f}", refresh=False)
        if progress.val_f1 is not None:
            # Beside the bars on stderr: stdout carries the command's result.
            bar.write(
                f"{progress.stage} epoch {progress.epoch}: "
                f"validation F1 {progress.val_f1:.3f}",
                file=sys.stderr,
            )
        bar.refresh()

    def close(self) -> None:
        for bar in self.bars.values():
            bar.close()


@dataclass
class Dataset:
    """Pairs for each role, built from the checker's pairs and the labels."""

    human_train: list[Example] = field(default_factory=list)
    validation: list[Example] = field(default_factory=list)
    #: validation claims the checker decides without the scorer (flagged)
    validation_forced: int = 0
    validation_forced_unsafe: int = 0
    silver: list[Example] = field(default_factory=list)
    #: "human" labels, or "silver" pairs of held-out documents when there
    #: are no labels yet (a zero-label scorer)
    validation_source: str = "human"


def build_dataset(
    pairs: Sequence[Pair],
    labels: Mapping[str, Label],
    *,
    config: TrainConfig,
    silver: Sequence[Example] = (),
    grader: Scorer | None = None,
) -> Dataset:
    """Split the labelled pairs by document, keep the silver pairs off the
    validation documents.

    With ``grader`` (an LLM grader) its verdicts on the unlabelled pairs the
    scorer would judge are added as silver labels.
    """
    labelled_docs = sorted({p.document_id for p in pairs if p.claim_id in labels})
    if not labelled_docs:
        if "silver" in config.stages and silver:
            return _silver_only_dataset(silver, config)
        raise TrainingError(
            "no labelled claim matches a known document, and no silver "
            "pairs to learn from without labels"
        )
    rng = random.Random(config.seed)
    rng.shuffle(labelled_docs)
    n_val = max(1, round(len(labelled_docs) * config.validation_share))
    val_docs = set(labelled_docs[:n_val])
    data = Dataset()
    for p in pairs:
        label = labels.get(p.claim_id)
        if label is None:
            continue
        unsafe = label.label == "unsafe"
        if not p.scored:
            if p.document_id in val_docs:
                data.validation_forced += 1
                data.validation_forced_unsafe += unsafe
            continue
        example = Example(p.premise, p.hypothesis, not unsafe, p.document_id, "human")
        (data.validation if p.document_id in val_docs else data.human_train).append(
            example
        )
    if "silver" in config.stages or config.replay:
        data.silver = [e for e in silver if e.document_id not in val_docs]
        if grader is not None:
            unlabelled = [
                p
                for p in pairs
                if p.scored
                and p.claim_id not in labels
                and p.document_id not in val_docs
            ]
            data.silver += _graded_examples(unlabelled, grader)
        rng.shuffle(data.silver)
        if config.silver_limit is not None:
            data.silver = data.silver[: config.silver_limit]
    return data


def replayed(data: Dataset, config: TrainConfig) -> list[Example]:
    """The silver pairs the expert stage trains on beside the expert ones:
    ``config.replay`` of them per expert pair, drawn with the run's seed."""
    n = min(len(data.silver), round(config.replay * len(data.human_train)))
    return random.Random(config.seed).sample(data.silver, n)


#: Silver pairs a zero-label run validates on: enough to pick a threshold,
#: few enough to validate every epoch on a CPU.
SILVER_VALIDATION_LIMIT = 800


def _silver_only_dataset(silver: Sequence[Example], config: TrainConfig) -> Dataset:
    """Before the first label: validate on the silver pairs of held-out
    documents, train on the rest."""
    docs = sorted({e.document_id for e in silver})
    if len(docs) < 2:
        raise TrainingError(
            "a scorer without labels needs silver pairs from at least two "
            "documents (one to learn from, one to validate on)"
        )
    rng = random.Random(config.seed)
    rng.shuffle(docs)
    val_docs = set(docs[: max(1, round(len(docs) * config.validation_share))])
    data = Dataset(validation_source="silver")
    for e in silver:
        (data.validation if e.document_id in val_docs else data.silver).append(e)
    rng.shuffle(data.validation)
    data.validation = data.validation[:SILVER_VALIDATION_LIMIT]
    rng.shuffle(data.silver)
    if config.silver_limit is not None:
        data.silver = data.silver[: config.silver_limit]
    return data


def _graded_examples(pairs: Sequence[Pair], grader: Scorer) -> list[Example]:
    scores = grader.score_pairs([(p.premise, p.hypothesis) for p in pairs])
    return [
        Example(
            p.premise,
            p.hypothesis,
            score >= grader.threshold,
            p.document_id,
            "silver:llm",
        )
        for p, score in zip(pairs, scores, strict=True)
    ]


def _output_layer(model):
    """The classification head's last linear layer (BERT's ``classifier``,
    RoBERTa's and DeBERTa's ``classifier.out_proj`` or ``classifier``)."""
    import torch

    layers = [m for m in model.modules() if isinstance(m, torch.nn.Linear)]
    return layers[-1]


class Trainer:
    """A plain PyTorch loop over a sentence-transformers CrossEncoder.

    Batches group pairs of similar length (padding is most of the cost on
    CPU); word embeddings are frozen (cuts the optimiser step by ~20% and
    keeps the vocabulary's pre-trained geometry).
    """

    def __init__(self, config: TrainConfig, on_progress: ProgressCallback | None):
        import torch

        self.torch = torch
        self.config = config
        self.on_progress = on_progress or (lambda _: None)
        torch.manual_seed(config.seed)
        base = config.base
        num_labels = 1 if base == DEFAULT_BASE_MODEL else None
        self.encoder = load_cross_encoder(
            base,
            num_labels=num_labels,
            max_length=config.max_length,
            device=config.device,
        )
        self.model = self.encoder.model
        self.tokenizer = self.encoder.tokenizer
        if self.model.config.num_labels != 1:
            # A 3-way NLI head is replaced: we train p(supports) directly.
            self._reset_head()
        if config.freeze_embeddings:
            self.model.get_input_embeddings().weight.requires_grad_(False)
        self.device = self.model.device

    def _reset_head(self) -> None:
        """Swap an NLI head (entailment, neutral, contradiction) for the one
        logit every scorer here trains, p(supports), starting where the old
        head stood: entailment's row less the mean of the others (exact for
        a two-way head), so training starts from what the model knows."""
        old = self.model
        entails = entailment_index(old.config.id2label)
        self.encoder = load_cross_encoder(
            old.name_or_path,
            num_labels=1,
            max_length=self.config.max_length,
            device=self.config.device,
        )
        self.model = self.encoder.model
        old_out, new_out = _output_layer(old), _output_layer(self.model)
        others = [i for i in range(old_out.out_features) if i != entails]
        with self.torch.no_grad():
            for name in ("weight", "bias"):
                rows = getattr(old_out, name)
                getattr(new_out, name).copy_(
                    (rows[entails] - rows[others].mean(dim=0)).unsqueeze(0)
                )

    def _batches(
        self, examples: Sequence[Example], *, shuffle: bool, rng=None, grouped=False
    ):
        """Padded batches of similar length, shuffled when training;
        ``grouped`` keeps the pairs of one premise in one batch (a premise
        with more pairs than a batch holds is cut into batch-sized groups;
        a batch then fills past the batch size by less than one batch)."""
        encoded = self.tokenizer(
            [e.premise for e in examples],
            [e.hypothesis for e in examples],
            truncation=True,
            max_length=self.config.max_length,
        )
        size = self.config.batch_size
        units = (
            [
                g[k : k + size]
                for g in premise_groups(examples)
                for k in range(0, len(g), size)
            ]
            if grouped
            else [[i] for i in range(len(examples))]
        )

        def length(unit: list[int]) -> int:
            return len(encoded["input_ids"][unit[0]])

        if shuffle:
            rng.shuffle(units)
            chunk = size * 50
            units = [
                u
                for start in range(0, len(units), chunk)
                for u in sorted(units[start : start + chunk], key=length)
            ]
        else:
            units.sort(key=length)
        batches, batch = [], []
        for unit in units:
            batch += unit
            if len(batch) >= size:
                batches.append(batch)
                batch = []
        if batch:
            batches.append(batch)
        if shuffle:
            rng.shuffle(batches)
        for batch in batches:
            features = self.tokenizer.pad(
                {k: [encoded[k][i] for i in batch] for k in encoded},
                return_tensors="pt",
            ).to(self.device)
            yield batch, features

    def scores(self, examples: Sequence[Example]) -> list[float]:
        self.model.eval()
        out = [0.0] * len(examples)
        with self.torch.inference_mode():
            for batch, features in self._batches(examples, shuffle=False):
                probs = self.model(**features).logits[:, 0].float().sigmoid().tolist()
                for i, p in zip(batch, probs, strict=True):
                    out[i] = p
        return out

    def validate(self, data: Dataset) -> tuple[float, float]:
        """Best (threshold, F1) on the validation split, whole pipeline counted."""
        scores = self.scores(data.validation) + [0.0] * data.validation_forced
        unsafe = [not e.supported for e in data.validation] + (
            [True] * data.validation_forced_unsafe
            + [False] * (data.validation_forced - data.validation_forced_unsafe)
        )
        forced = [False] * len(data.validation) + [True] * data.validation_forced
        return best_threshold(scores, unsafe, forced=forced)

    def fit(self, stage: str, examples: Sequence[Example], epochs: int, data: Dataset):
        """Train up to ``epochs`` epochs; keep the weights of the best validation F1.

        Only trained epochs compete: the weights the stage started from
        (a random head, or the silver model) are reported as epoch 0 but never
        kept, since a small validation split can rate them so high that no
        training would ever count. Ties go to the later epoch. Without labels
        (silver validation, thousands of pairs) the start does compete, so a
        zero-label run never ends worse than the scorer it started from.
        """
        torch = self.torch
        if not examples or epochs < 1:
            return None
        n_pos = sum(e.supported for e in examples)
        n_neg = len(examples) - n_pos
        if not n_pos or not n_neg:
            raise TrainingError(f"{stage} stage needs both safe and unsafe examples")
        # Weight the classes equally: unsafe is the minority we must not miss.
        loss_fn = torch.nn.BCEWithLogitsLoss(
            pos_weight=torch.tensor([n_neg / n_pos], device=self.device)
        )
        params = [p for p in self.model.parameters() if p.requires_grad]
        # The fused step is several times faster than the per-tensor default
        # on a CPU, where the optimiser is a fifth of each training step.
        optimizer = torch.optim.AdamW(
            params,
            lr=self.config.learning_rate,
            weight_decay=0.01,
            fused=self.device.type in ("cpu", "cuda"),
        )
        steps = epochs * math.ceil(len(examples) / self.config.batch_size)
        warmup = max(1, steps // 10)
        scheduler = torch.optim.lr_scheduler.LambdaLR(
            optimizer,
            lambda s: min(
                (s + 1) / warmup, max(0.0, (steps - s) / (steps - warmup + 1))
            ),
        )
        rng = random.Random(self.config.seed)
        start_threshold, start_f1 = self.validate(data)
        self.on_progress(Progress(stage, 0, 0, steps, val_f1=start_f1))
        best: tuple[float, float, dict, int] | None = None
        if data.validation_source == "silver":
            best = (
                start_threshold,
                start_f1,
                copy.deepcopy(self.model.state_dict()),
                0,
            )
        step, stale = 0, 0
        for epoch in range(1, epochs + 1):
            self.model.train()
            for batch, features in self._batches(
                examples, shuffle=True, rng=rng, grouped=self.config.listwise > 0
            ):
                target = torch.tensor(
                    [float(examples[i].supported) for i in batch], device=self.device
                )
                logits = self.model(**features).logits[:, 0]
                loss = loss_fn(logits, target)
                if self.config.listwise > 0:
                    loss = loss + self.config.listwise * listwise_loss(
                        logits, [examples[i] for i in batch]
                    )
                loss.backward()
                torch.nn.utils.clip_grad_norm_(params, 1.0)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()
                step += 1
                self.on_progress(Progress(stage, epoch, step, steps, loss=loss.item()))
            threshold, f1 = self.validate(data)
            self.on_progress(Progress(stage, epoch, step, steps, val_f1=f1))
            if best is None or f1 >= best[1]:
                best = (threshold, f1, copy.deepcopy(self.model.state_dict()), epoch)
                stale = 0
            else:
                stale += 1
                if stale >= self.config.patience:
                    break
        assert best is not None  # epochs >= 1: the loop ran and set it
        self.model.load_state_dict(best[2])
        return {
            "epochs_run": epoch,
            "best_epoch": best[3],
            "start_val_f1": start_f1,
            "val_f1": best[1],
            "threshold": best[0],
            "examples": len(examples),
        }


def premise_groups(examples: Sequence[Example]) -> list[list[int]]:
    """Indexes of the examples, grouped by premise (first seen first)."""
    groups: dict[str, list[int]] = {}
    for i, e in enumerate(examples):
        groups.setdefault(e.premise, []).append(i)
    return list(groups.values())


def best_rivals(
    examples: Sequence[Example], scores: Sequence[float]
) -> list[float | None]:
    """For each example, the best score of the other hypotheses about its
    premise (None when it has none): its rivals, as the check reads them."""
    best: list[float | None] = [None] * len(examples)
    for group in premise_groups(examples):
        for i in group:
            others = [
                scores[j]
                for j in group
                if examples[j].hypothesis != examples[i].hypothesis
            ]
            best[i] = max(others, default=None)
    return best


def listwise_loss(logits, examples: Sequence[Example]):
    """Mean over the supported examples that share their premise with an
    unsupported one of ``-log softmax`` of the supported one among them
    (zero when the batch has none): a true claim outscores the false ones
    about the same text."""
    import torch

    n = len(examples)
    supported = torch.tensor([e.supported for e in examples], device=logits.device)
    same = torch.tensor(
        [[a.premise == b.premise for b in examples] for a in examples],
        device=logits.device,
    )
    rivals = same & ~supported.unsqueeze(0)
    rows = supported & rivals.any(dim=1)
    if not rows.any():
        return logits.sum() * 0
    eye = torch.eye(n, dtype=torch.bool, device=logits.device)
    allowed = (rivals | eye)[rows]
    scores = logits.unsqueeze(0).expand(n, n)[rows].masked_fill(~allowed, -math.inf)
    return (scores.logsumexp(dim=1) - logits[rows]).mean()


def train_scorer(
    checker: Checker,
    claims: Sequence[Any],
    labels: Mapping[str, Label],
    out_dir: str | Path,
    *,
    config: TrainConfig | None = None,
    grader: Scorer | None = None,
    on_progress: ProgressCallback | None = None,
    silver: Sequence[Example] | None = None,
    mixed: Sequence[Example] = (),
) -> dict[str, Any]:
    """Fine-tune the scorer of ``checker``'s kind and save it as a
    sentence-transformers folder.

    Args:
        checker: gives the pair the scorer reads for each labelled claim and
            the silver pairs.
        claims: every claim; unlabelled ones feed the silver stage.
        labels: human labels by claim id.
        out_dir: folder to write (model files and ``metadata.json``).
        config: hyper-parameters and which stages to run.
        grader: optional LLM grader whose verdicts become silver labels.
        on_progress: called after every step and validation; whatever it
            raises stops training before anything is written.
        silver: precomputed silver pairs (``checker.silver_examples``), e.g.
            from a cache; by default the checker makes them from ``claims``.
        mixed: pairs of another task (human-labelled NLI pairs) shuffled
            into the silver stage's training, never validated on: they teach
            entailment, which no rule-made pair can.

    Returns:
        The metadata written to ``metadata.json``: kind, base model, label
        counts, threshold, validation metrics, stage histories.

    Raises:
        TrainingError: too few labels, or one class missing.
        TrainingCancelled: raised by ``on_progress``; ``out_dir`` is not created.
    """
    config = config or TrainConfig()
    started = time.monotonic()
    if silver is None:
        silver = (
            checker.silver_examples(claims, seed=config.seed)
            if "silver" in config.stages or config.replay
            else []
        )
    # The grader judges unlabelled claims too; otherwise only labelled ones
    # need their pairs (finding the evidence is most of the cost).
    pairs = checker.training_pairs(claims, only=None if grader else set(labels))
    data = build_dataset(pairs, labels, config=config, silver=silver, grader=grader)
    if not data.validation:
        raise TrainingError("the validation split holds no aligned labelled claim")
    trainer = Trainer(config, on_progress)
    stages: dict[str, Any] = {}
    if "silver" in config.stages:
        stages["silver"] = trainer.fit(
            "silver", data.silver + list(mixed), config.silver_epochs, data
        )
    if "human" in config.stages:
        stages["human"] = trainer.fit(
            "human",
            data.human_train + replayed(data, config),
            config.human_epochs,
            data,
        )
    threshold, best_f1 = trainer.validate(data)
    val_scores = trainer.scores(data.validation) + [0.0] * data.validation_forced
    val_unsafe = [not e.supported for e in data.validation] + (
        [True] * data.validation_forced_unsafe
        + [False] * (data.validation_forced - data.validation_forced_unsafe)
    )
    if data.validation_source == "silver":
        threshold = (
            precision_threshold(
                val_scores, val_unsafe, target=config.silver_flag_precision
            )
            or threshold
        )
    margin = (
        rival_margin(
            val_scores[: len(data.validation)],
            best_rivals(data.validation, val_scores),
            val_unsafe[: len(data.validation)],
            threshold=threshold,
            target=config.silver_flag_precision,
        )
        if config.listwise > 0
        else None
    )
    metrics = flag_metrics([s < threshold for s in val_scores], val_unsafe)
    metrics["source"] = data.validation_source
    metrics["best_f1"] = best_f1
    # What flagging every claim scores: a scorer must beat it to have learned.
    metrics["flag_all_f1"] = flag_metrics([True] * len(val_unsafe), val_unsafe)["f1"]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    trainer.encoder.save(str(out))
    metadata = {
        "name": out.name,
        "kind": checker.kind,
        "base_model": config.base,
        "pipeline_version": __version__,
        "threshold": threshold,
        "rival_margin": margin,
        "label_counts": {
            "human_train": len(data.human_train),
            "human_train_unsafe": sum(not e.supported for e in data.human_train),
            "validation": len(data.validation) + data.validation_forced,
            "silver": len(data.silver),
            "silver_unsafe": sum(not e.supported for e in data.silver),
            "mixed": len(mixed) if "silver" in config.stages else 0,
        },
        "validation": metrics,
        "stages": stages,
        "config": asdict(config),
        "train_seconds": round(time.monotonic() - started, 1),
        "device": str(trainer.device),
    }
    text = json.dumps(metadata, indent=2)
    (out / METADATA_FILE).write_text(text, encoding="utf-8")
    return json.loads(text)

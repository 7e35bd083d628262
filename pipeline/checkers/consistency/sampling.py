"""Cross-model samples (paper 2.3 and A.2, A.4): each sample answers a
variant of the prompt, from one of the sampler models.

The variants and the models are shuffled once per item, seeded, and sample
``i`` takes variant ``i mod |V|`` and model ``i mod |M|``: every pairing is
covered in turn and a rerun with the same seed asks the same questions of
the same models. The LLM-made variants are asked of the reformulator once per
item and variant, however many samples use them.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from typing import TypeVar

from .calls import CallLedger, Tally, gather
from .items import Item, Sample
from .models import ModelSpec
from .prompts import (
    COT_SUFFIX,
    LONG_ANSWER_PREFIX,
    Prompts,
    UnusableAnswer,
    render,
    tag_text,
)

T = TypeVar("T")

#: Paper A.2, in its order: three static variations, four made by an LLM.
VARIANTS = (
    "identity",
    "cot",
    "long_answer",
    "rephrase",
    "expand_before",
    "expand_after",
    "break_down",
)
#: The LLM-made variants and the tag their answer comes in.
REFORMULATED = {
    "rephrase": "new",
    "expand_before": "answer",
    "expand_after": "answer",
    "break_down": "sub-prompts",
}
#: A.4: ten samples per response.
DEFAULT_SAMPLES = 10


def assign_samples(
    n: int, *, variants: Sequence[str], models: Sequence[T], seed: int | str
) -> list[tuple[str, T]]:
    """``(variant, model)`` of each of ``n`` samples (paper A.4).

    Both lists are shuffled once with ``random.Random(seed)``, variants
    first; sample ``i`` takes variant ``i mod |V|`` and model ``i mod |M|``.

    Raises:
        ValueError: no variant or no model.
    """
    if not variants or not models:
        raise ValueError("sampling needs at least one variant and one model")
    rng = random.Random(seed)
    variants, models = list(variants), list(models)
    rng.shuffle(variants)
    rng.shuffle(models)
    return [(variants[i % len(variants)], models[i % len(models)]) for i in range(n)]


def static_variant(variant: str, prompt: str) -> str:
    """The prompt under a static variation (identity, cot, long_answer)."""
    if variant == "identity":
        return prompt
    if variant == "cot":
        return f"{prompt}\n\n{COT_SUFFIX}"
    if variant == "long_answer":
        return f"{LONG_ANSWER_PREFIX}\n\n{prompt}"
    raise ValueError(f"{variant!r} is not a static variation")


def reformulation_request(variant: str, prompt: str, prompts: Prompts) -> str:
    """What the reformulator is asked for an LLM-made variant."""
    return render(getattr(prompts, variant), original=prompt)


def apply_reformulation(variant: str, prompt: str, answer: str) -> str:
    """The variant prompt from the reformulator's answer.

    Expand-before puts the added sentences before the prompt, expand-after
    after it; break-down sends the sub-prompts, one a line, in its place.

    Raises:
        UnusableAnswer: the answer's tag is missing or empty.
    """
    tag = REFORMULATED[variant]
    text = tag_text(answer, tag)
    if variant == "break_down":
        text = "\n".join(line.strip() for line in text.splitlines() if line.strip())
    if not text:
        raise UnusableAnswer(f"<{tag}> is empty")
    if variant == "expand_before":
        return f"{text}\n\n{prompt}"
    if variant == "expand_after":
        return f"{prompt}\n\n{text}"
    return text


def check_variants(variants: Sequence[str]) -> None:
    """Raises ValueError naming a variant that is not one of :data:`VARIANTS`."""
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown or not variants:
        raise ValueError(f"unknown variants {unknown}; known: {list(VARIANTS)}")


def sample_item(
    item: Item,
    *,
    samplers: Sequence[ModelSpec],
    reformulator: ModelSpec | None,
    ledger: CallLedger,
    pool: Executor,
    count: int = DEFAULT_SAMPLES,
    variants: Sequence[str] = VARIANTS,
    seed: int = 0,
    prompts: Prompts | None = None,
    tally: Tally | None = None,
) -> list[Sample]:
    """Make ``count`` samples for ``item``, the calls run on ``pool``.

    The shuffle is seeded with ``seed`` and the item's id, so each prompt
    gets its own order and a rerun the same one. A reformulation without its
    tag falls back to the original prompt, said in the sample's ``note``.

    Raises:
        ValueError: an LLM-made variant is assigned and there is no
            reformulator.
        BudgetExceeded, LLMError: a call was refused or failed.
    """
    prompts = prompts or Prompts()
    assignment = assign_samples(
        count, variants=variants, models=samplers, seed=f"{seed}:{item.id}"
    )
    made = sorted({v for v, _ in assignment if v in REFORMULATED})
    if made and reformulator is None:
        raise ValueError(f"variants {made} need a reformulator model")
    requests = [reformulation_request(v, item.prompt, prompts) for v in made]
    calls = (
        [_call(ledger, reformulator, r, tally) for r in requests]
        if reformulator is not None
        else []  # nothing to reformulate: ``made`` is empty
    )
    answers = gather(pool, calls)
    asked: dict[str, tuple[str, str | None]] = {}
    for variant, answer in zip(made, answers, strict=True):
        try:
            asked[variant] = (apply_reformulation(variant, item.prompt, answer), None)
        except UnusableAnswer as e:
            note = f"{variant}: unusable reformulation ({e}); sent the original prompt"
            asked[variant] = (item.prompt, note)
    for variant, _ in assignment:
        if variant not in REFORMULATED:
            asked[variant] = (static_variant(variant, item.prompt), None)
    texts = gather(
        pool, [_call(ledger, model, asked[v][0], tally) for v, model in assignment]
    )
    return [
        Sample(text, model=model.model, variant=v, note=asked[v][1])
        for text, (v, model) in zip(texts, assignment, strict=True)
    ]


def _call(
    ledger: CallLedger, spec: ModelSpec, prompt: str, tally: Tally | None
) -> Callable[[], str]:
    return lambda: ledger.chat(spec, prompt, tally=tally)

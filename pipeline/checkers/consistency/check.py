"""FINCH-ZK over many items: sample, judge, score, and mitigate each.

Items run side by side, and so do the calls within an item; every call goes
through one :class:`~.calls.CallLedger`, whose per-endpoint limits bound what
is in flight and whose budget stops the run. An item whose call fails or is
refused is reported, not written; once the budget is reached no further item
starts, and what finished is returned.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

from ...llm import LLMError
from ..sentences import sentence_spans
from .calls import BudgetExceeded, CallLedger, Tally
from .items import Block, Item, ItemResult
from .judge import Judge, LLMJudge
from .mitigate import mitigate_blocks, rebuild, reflect
from .models import ModelSpec
from .prompts import Prompts, UnusableAnswer
from .sampling import (
    DEFAULT_SAMPLES,
    REFORMULATED,
    VARIANTS,
    check_variants,
    sample_item,
)
from .verdicts import DEFAULT_TAU, WEIGHTS, block_label, block_score, response_verdict

#: Items checked at once by default.
DEFAULT_WORKERS = 4


@dataclass(frozen=True)
class ConsistencyConfig:
    """How a run samples and scores.

    Args:
        samples: samples per item that has none (A.4: 10).
        seed: seeds the per-item shuffle of variants and models.
        variants: the prompt variations to cycle through.
        tau: the block labelling threshold (A.4: 0.33).
        weights: judgement weights per label (A.4: 2 / 1 / 4 / 0).
        reflect: rewrite each response by cross-model reflection after
            block correction (needs an improver).
        prompts: the templates.
    """

    samples: int = DEFAULT_SAMPLES
    seed: int = 0
    variants: tuple[str, ...] = VARIANTS
    tau: float = DEFAULT_TAU
    weights: Mapping[str, float] = field(default_factory=lambda: WEIGHTS)
    reflect: bool = False
    prompts: Prompts = Prompts()

    def __post_init__(self):
        if self.samples < 1:
            raise ValueError("samples must be 1 or more")
        if not 0 <= self.tau < 0.5:
            raise ValueError("tau must be in [0, 0.5)")
        check_variants(self.variants)


@dataclass
class CheckReport:
    """What a run did: ``results`` of the items that finished, in input
    order; ``failures`` as ``(item id, error)``; ``not_started`` the ids of
    items skipped once the run ``stopped`` (why, or ``None``); ``usage`` the
    run's spend (:meth:`~.calls.Tally.to_json`)."""

    results: list[ItemResult] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)
    not_started: list[str] = field(default_factory=list)
    stopped: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class _Failed:
    """Why an item did not finish."""

    message: str


@dataclass(frozen=True)
class _Roles:
    samplers: tuple[ModelSpec, ...]
    reformulator: ModelSpec | None
    summarizer: ModelSpec | None
    improver: ModelSpec | None


def check_items(
    items: Sequence[Item],
    *,
    judge: Judge,
    samplers: Sequence[ModelSpec] = (),
    reformulator: ModelSpec | None = None,
    improver: ModelSpec | None = None,
    ledger: CallLedger | None = None,
    config: ConsistencyConfig | None = None,
    workers: int = DEFAULT_WORKERS,
    on_progress: Callable[[int, int], None] | None = None,
) -> CheckReport:
    """Check each item's response for blocks its samples contradict.

    Args:
        items: items; those with ``samples`` are not sampled again.
        judge: an :class:`~.judge.LLMJudge` or :class:`~.judge.NLIJudge`.
        samplers: the sampler models (needed when an item has no samples).
        reformulator: makes the LLM variants; default the LLM judge's model.
        improver: corrects flagged blocks (and reflects); none: no
            correction. Error summaries come from the LLM judge's model, or
            the improver's with an offline judge.
        ledger: every call goes through it, the LLM judge's included;
            default the LLM judge's, else one over the models given with no
            keys and no budget (a local server).
        config: sampling and scoring options.
        workers: items checked at once.
        on_progress: called with ``(finished, total)`` as items finish.

    Returns:
        A :class:`CheckReport`.

    Raises:
        ValueError: the models given cannot do what the items need (no
            sampler for an item without samples, no reformulator for an LLM
            variant, no improver to reflect), the ledger lacks one, or the
            judge has another ledger.
    """
    config = config or ConsistencyConfig()
    judge_spec = judge.spec if isinstance(judge, LLMJudge) else None
    roles = _Roles(
        samplers=tuple(samplers),
        reformulator=reformulator or judge_spec,
        summarizer=judge_spec or improver,
        improver=improver,
    )
    unsampled = [i.id for i in items if not i.samples]
    _check_roles(roles, config, unsampled)
    roles_specs = [*roles.samplers, roles.reformulator, roles.summarizer, improver]
    specs = [s for s in dict.fromkeys([judge_spec, *roles_specs]) if s is not None]
    judge_ledger = judge.ledger if isinstance(judge, LLMJudge) else None
    if ledger is None:
        ledger = judge_ledger or CallLedger(specs)
    if judge_ledger is not None and judge_ledger is not ledger:
        raise ValueError("the judge sends its calls through another ledger")
    unknown = sorted({s.model for s in specs if not ledger.knows(s)})
    if unknown:
        raise ValueError(f"models {unknown} were not given to the ledger")

    report = CheckReport()
    outcomes: dict[int, ItemResult | _Failed | None] = {}
    with (
        ThreadPoolExecutor(max_workers=max(1, ledger.slots)) as calls,
        ThreadPoolExecutor(max_workers=max(1, workers)) as runner,
    ):

        def run(item: Item):
            if ledger.stopped is not None:
                return None
            try:
                return _check_item(
                    item,
                    judge=judge,
                    roles=roles,
                    ledger=ledger,
                    pool=calls,
                    config=config,
                )
            except (BudgetExceeded, LLMError) as e:
                return _Failed(str(e))

        futures = {runner.submit(run, item): i for i, item in enumerate(items)}
        for done, future in enumerate(as_completed(futures), start=1):
            outcomes[futures[future]] = future.result()
            if on_progress is not None:
                on_progress(done, len(items))
    for i, item in enumerate(items):
        outcome = outcomes[i]
        if outcome is None:
            report.not_started.append(item.id)
        elif isinstance(outcome, _Failed):
            report.failures.append((item.id, outcome.message))
        else:
            report.results.append(outcome)
    report.stopped = ledger.stopped
    report.usage = ledger.tally.to_json()
    return report


def _check_roles(roles: _Roles, config: ConsistencyConfig, unsampled: list[str]):
    if unsampled and not roles.samplers:
        raise ValueError(
            f"{len(unsampled)} items have no samples (first {unsampled[0]!r}) "
            "and no sampler model is given"
        )
    made = sorted(set(config.variants) & set(REFORMULATED))
    if unsampled and made and roles.reformulator is None:
        raise ValueError(f"variants {made} need a reformulator model (or an LLM judge)")
    if config.reflect and roles.improver is None:
        raise ValueError("reflection needs an improver model")


def _check_item(
    item: Item,
    *,
    judge: Judge,
    roles: _Roles,
    ledger: CallLedger,
    pool: Executor,
    config: ConsistencyConfig,
) -> ItemResult:
    tally = Tally()
    if not item.samples:
        samples = sample_item(
            item,
            samplers=roles.samplers,
            reformulator=roles.reformulator,
            ledger=ledger,
            pool=pool,
            count=config.samples,
            variants=config.variants,
            seed=config.seed,
            prompts=config.prompts,
            tally=tally,
        )
        item = dataclasses.replace(item, samples=tuple(samples))
    spans = sentence_spans(item.response)
    judgements = judge.judge(item, spans, pool=pool, tally=tally)
    blocks = []
    for (start, end), row in zip(spans, judgements, strict=True):
        block_value = block_score((j.label for j in row), weights=config.weights)
        block_verdict = block_label(block_value, tau=config.tau)
        text = item.response[start:end]
        blocks.append(Block(start, end, text, row, block_value, block_verdict))
    score, label = response_verdict((b.score, b.label) for b in blocks)
    notes: list[str] = []
    if roles.summarizer is not None or roles.improver is not None:
        blocks, notes = mitigate_blocks(
            blocks,
            summarizer=roles.summarizer,
            improver=roles.improver,
            ledger=ledger,
            pool=pool,
            prompts=config.prompts,
            tally=tally,
        )
    corrected = improved = None
    if roles.improver is not None:
        corrected = rebuild(item.response, blocks)
        if config.reflect:
            try:
                improved = reflect(
                    item,
                    corrected,
                    improver=roles.improver,
                    ledger=ledger,
                    prompts=config.prompts,
                    tally=tally,
                )
            except UnusableAnswer as e:
                notes.append(f"unusable reflection ({e})")
    return ItemResult(
        item=item,
        blocks=tuple(blocks),
        score=score,
        label=label,
        corrected=corrected,
        improved=improved,
        notes=tuple(notes),
        usage=tally.to_json(),
    )

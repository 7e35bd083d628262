"""Sampling runs: other models answer a consistency project's prompts.

FINCH-ZK judges each block of an answer against samples, answers of other
models to variants of its prompt (paper 2.3, A.2, A.4). Answers imported
without samples get them here, from the project's LLM endpoint, with the
library's sampling (``pipeline.checkers.consistency.sampling.sample_item``)
and one call ledger per execution. It costs money per call, so a run shows an
estimate before it starts and stops before passing its budget; the samples
go into each document's metadata, where the check reads them, and the check
is sent again to judge the blocks.
"""

from __future__ import annotations

import logging
import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from .checking import check_enqueue, predictions_reset
from .dispatch import send_after_commit
from .errors import ApplicationError, ConfigurationError, TransientError
from .extraction import llm_config
from .ingest import batched
from .llm_costs import (
    PRICE_KEYS,
    Prices,
    budget_from,
    cost,
    llm_model_check,
    prices_from,
)
from .models import (
    ACTIVE_RUN_STATUSES,
    FINISHED_RUN_STATUSES,
    Document,
    Prediction,
    Project,
    RunStatus,
    SamplingRun,
)
from .records import document_record
from .runs import run_cancel, run_claim, run_end, run_lock

logger = logging.getLogger(__name__)

#: The project kind whose answers are sampled.
KIND = "consistency"
#: Answers sampled per batch: the budget is checked before each one, and the
#: batch's samples are stored (and its cost booked) together.
BATCH_SIZE = 4
#: Most samples per answer (the paper takes ten, A.4).
MAX_SAMPLES = 50

# Deliberate approximations, for the estimate only (runs count real usage,
# and the call ledger refuses any call that could pass the budget): ~4
# characters per token, ~3 tokens of framing per message plus ~3 to prime the
# reply (as grading's estimate); a sample is about as long as the answer
# checked, which answers the same prompt; the long-answer variant asks for
# 1,000 words (~1,400 tokens); an LLM-made variant (and the reformulator's
# answer) about twice the prompt, since the expansions add to it.
CHARS_PER_TOKEN = 4
TOKENS_PER_CALL = 3 + 3
LONG_ANSWER_TOKENS = 1400
REFORMULATED_GROWTH = 2

# High bits of the Postgres advisory lock key held by whoever executes a run
# (grading's are 0x5AFE).
_LOCK_CLASS = 0x5AFF
_MAX_ERROR_LINES = 50
#: What the run's params hold besides prices and LLM settings.
_OPTIONS = ("samplers", "reformulator", "samples", "seed", "variants")
#: LLM settings a run may set on its calls; the rest of params is refused.
_SETTINGS = ("temperature", "max_tokens", "max_concurrency", "timeout", "max_retries")


def _library():
    # The library imports openai: the web process pays for that import only
    # when an admin asks for an estimate or starts a run.
    from pipeline.checkers.consistency import sampling

    return sampling


# --- params ------------------------------------------------------------------


def _integer(params: dict[str, Any], key: str, default: int, *, low: int, high=None):
    value = params.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ApplicationError(f"params.{key} must be an integer, got {value!r}")
    if value < low or (high is not None and value > high):
        top = f" and at most {high}" if high is not None else ""
        raise ApplicationError(f"params.{key} must be at least {low}{top}")
    return value


def sampling_params(project: Project, params: Any) -> dict[str, Any]:
    """The run's params checked, with the defaults filled in, as it stores
    them: ``samplers`` (models of the project), ``reformulator`` (writes the
    LLM-made variants; the first sampler by default), ``samples`` per answer,
    ``seed``, ``variants``, the prices and LLM settings.

    Raises:
        ApplicationError: a project of another kind, a model it does not
            allow (named), or a malformed value (named).
    """
    if project.kind != KIND:
        raise ApplicationError(
            f"project {project.name!r} is of kind {project.kind!r}; sampling "
            f"runs are for {KIND} projects"
        )
    if not isinstance(params, dict):
        raise ApplicationError("params must be an object")
    unknown = sorted(set(params) - {*_OPTIONS, *_SETTINGS, *PRICE_KEYS})
    if unknown:
        raise ApplicationError(
            f"unknown params {unknown}; known: {[*_OPTIONS, *_SETTINGS, *PRICE_KEYS]}"
        )
    samplers = params.get("samplers")
    if (
        not isinstance(samplers, list)
        or not samplers
        or not all(isinstance(m, str) and m for m in samplers)
    ):
        raise ApplicationError("params.samplers must be a non-empty list of models")
    samplers = list(dict.fromkeys(samplers))
    reformulator = params.get("reformulator") or samplers[0]
    for model in (*samplers, reformulator):
        if not isinstance(model, str):
            raise ApplicationError("params.reformulator must be a model name")
        llm_model_check(project, model)
    library = _library()
    variants = params.get("variants", list(library.VARIANTS))
    if not isinstance(variants, list):
        raise ApplicationError("params.variants must be a list")
    try:
        library.check_variants(variants)
    except ValueError as e:
        raise ApplicationError(f"params.variants: {e}") from None
    options = {
        **params,
        "samplers": samplers,
        "reformulator": reformulator,
        "samples": _integer(
            params, "samples", library.DEFAULT_SAMPLES, low=1, high=MAX_SAMPLES
        ),
        "seed": _integer(params, "seed", 0, low=0),
        "variants": list(dict.fromkeys(variants)),
    }
    for key in ("max_tokens", "max_concurrency"):
        if params.get(key) is not None:
            _integer(params, key, 1, low=1)
    if params.get("max_retries") is not None:
        _integer(params, "max_retries", 0, low=0)
    for key in ("temperature", "timeout"):
        value = params.get(key)
        if value is not None and (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value < 0
            or (key == "timeout" and value == 0)
        ):
            raise ApplicationError(f"params.{key} must be a number, got {value!r}")
    prices_from(options, required=False)
    return options


# --- reads -------------------------------------------------------------------


def unsampled(project: Project) -> QuerySet[Document]:
    """The project's answers a run would sample: with a prompt, no samples."""
    no_samples = (
        ~Q(metadata__has_key="samples")
        | Q(metadata__samples=None)
        | Q(metadata__samples=[])
    )
    return (
        Document.objects.filter(project=project, metadata__has_key="prompt")
        .exclude(metadata__prompt="")
        .exclude(metadata__prompt=None)
        .filter(no_samples)
    )


# --- estimate ----------------------------------------------------------------


@dataclass(frozen=True)
class SamplingEstimate:
    samplers: list[str]
    reformulator: str
    documents: int
    sample_calls: int
    reformulation_calls: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost: Decimal | None


def _tokens(chars: int) -> int:
    return math.ceil(chars / CHARS_PER_TOKEN)


def _document_estimate(
    document: Document, options: dict[str, Any]
) -> tuple[int, int, int, int]:
    """(sample calls, reformulation calls, prompt tokens, completion tokens)
    the library would spend on one answer: the same seeded assignment, so
    the same variants are asked for."""
    library = _library()
    from pipeline.checkers.consistency.prompts import Prompts

    prompt = str(document.metadata.get("prompt") or "")
    assignment = library.assign_samples(
        options["samples"],
        variants=options["variants"],
        models=options["samplers"],
        seed=f"{options['seed']}:{document.external_id}",
    )
    made = sorted({v for v, _ in assignment if v in library.REFORMULATED})
    cap = options.get("max_tokens")
    prompts = Prompts()
    prompt_tokens = sum(
        _tokens(len(library.reformulation_request(v, prompt, prompts))) for v in made
    )
    completion = len(made) * _tokens(REFORMULATED_GROWTH * len(prompt))
    answer = _tokens(len(document.text))
    for variant, _ in assignment:
        if variant in library.REFORMULATED:
            prompt_tokens += _tokens(REFORMULATED_GROWTH * len(prompt))
        else:
            prompt_tokens += _tokens(len(library.static_variant(variant, prompt)))
        wanted = max(answer, LONG_ANSWER_TOKENS) if variant == "long_answer" else answer
        completion += min(wanted, cap) if cap else wanted
    calls = len(assignment) + len(made)
    return (
        len(assignment),
        len(made),
        prompt_tokens + calls * TOKENS_PER_CALL,
        completion,
    )


def sampling_estimate(
    project: Project, params: Any, *, budget: Any = None
) -> SamplingEstimate:
    """What a sampling run with ``params`` would ask and roughly cost; it
    calls nobody. The cost is ``None`` without prices in ``params``.

    Raises:
        ApplicationError: params refused (:func:`sampling_params`), or a
            ``budget`` given without prices.
    """
    options = sampling_params(project, params)
    prices = prices_from(options, required=budget is not None)
    documents = unsampled(project).only("pk", "external_id", "text", "metadata")
    totals = [0, 0, 0, 0]
    n = 0
    for document in documents.iterator():
        n += 1
        for i, value in enumerate(_document_estimate(document, options)):
            totals[i] += value
    sample_calls, reformulations, prompt, completion = totals
    return SamplingEstimate(
        samplers=options["samplers"],
        reformulator=options["reformulator"],
        documents=n,
        sample_calls=sample_calls,
        reformulation_calls=reformulations,
        calls=sample_calls + reformulations,
        prompt_tokens=prompt,
        completion_tokens=completion,
        cost=cost(prices, prompt, completion) if prices else None,
    )


# --- runs --------------------------------------------------------------------


def sampling_run_start(
    *,
    project: Project,
    budget: Decimal | float | str,
    params: dict[str, Any],
    created_by=None,
) -> SamplingRun:
    """Create a run and enqueue it on commit.

    Refused for a project of another kind, a model it does not allow,
    without an LLM or prices (the budget is money), with a budget that is not
    positive, or while the project has a sampling run pending or running:
    two runs would sample the same answers.
    """
    budget = budget_from(budget)
    options = sampling_params(project, params)
    prices_from(options, required=True)
    estimate = sampling_estimate(project, options, budget=budget)
    with transaction.atomic():
        # Serialises concurrent starts on the project: one run at a time.
        Project.objects.select_for_update().filter(pk=project.pk).first()
        active = SamplingRun.objects.filter(
            project=project, status__in=ACTIVE_RUN_STATUSES
        ).first()
        if active is not None:
            raise ApplicationError(
                f"sampling run {active.pk} is already {active.status} on project "
                f"{project.name!r}; wait for it or cancel it"
            )
        run = SamplingRun.objects.create(
            project=project,
            model=options["reformulator"],
            params=options,
            budget=budget,
            cost_estimate=estimate.cost,
            progress_total=estimate.documents,
            created_by=created_by,
        )
        from . import tasks

        send_after_commit(tasks.run_sampling, run.pk)
    return run


def sampling_run_cancel(*, run: SamplingRun) -> SamplingRun:
    """Ask a run to stop before its next batch; one no worker holds stops now."""
    return run_cancel(run, lock_class=_LOCK_CLASS, noun="sampling")


def sampling_run_fail(*, run_id: int, error: str) -> None:
    """Record a permanent failure on the run (its task will not retry)."""
    run_end(SamplingRun, run_id, RunStatus.FAILED, note=error)


ANSWER, TRANSIENT, RUN, BUDGET = "answer", "transient", "run", "budget"


def _failure_kind(error: Exception) -> str:
    """Whose failure sampling an answer is: this answer's (ANSWER), the
    moment's (TRANSIENT, retry later), the run's (RUN) or the budget's."""
    from pipeline.checkers.consistency.calls import BudgetExceeded
    from pipeline.llm import LLMError

    if isinstance(error, BudgetExceeded):
        return BUDGET
    # An LLMError raised *from* the SDK's exception failed at the HTTP level;
    # one on its own is an unusable answer (a refusal, no choices).
    if not isinstance(error, LLMError) or error.__cause__ is None:
        return ANSWER
    if error.transient:
        return TRANSIENT
    if error.status_code in (401, 403, 404):
        return RUN  # wrong key, unknown model: every answer would fail
    return ANSWER  # e.g. a 400 for a prompt too long: this answer's


def sampling_run_execute(*, run_id: int) -> SamplingRun:
    """Sample a run's answers in batches until done, budget, or cancel.

    Safe to run twice or after a crash: one worker executes a run at a time
    (an advisory lock), and only answers still without samples are sent. A
    batch's samples are stored with its usage; a call the budget could not
    pay for is not sent, and the run stops there keeping what finished. An
    unusable answer is recorded on the run and its document stays without
    samples; a transient failure (network, 429, 5xx after the SDK's retries)
    raises TransientError for the task to retry; a configuration problem, a
    wrong key or an unknown model fails the run.
    """
    run = SamplingRun.objects.select_related("project").get(pk=run_id)
    if run.status in FINISHED_RUN_STATUSES:
        return run
    with run_lock(_LOCK_CLASS, run_id) as held:
        if not held:
            return run  # another worker is executing it
        if run_claim(SamplingRun, run_id):
            _execute(run)
    run.refresh_from_db()
    return run


def _specs(run: SamplingRun, options: dict[str, Any], prices: Prices):
    from pipeline.checkers.consistency.models import (
        DEFAULT_TEMPERATURE,
        ModelSpec,
        ModelSpecError,
    )

    project = run.project
    common = {
        "base_url": project.llm_base_url,
        "api_key_env": project.llm_api_key_env or None,
        # One endpoint, one price: the project's LLM serves every model.
        "price_per_mtok_prompt": float(prices[0]),
        "price_per_mtok_completion": float(prices[1]),
        "temperature": options.get("temperature", DEFAULT_TEMPERATURE),
        "max_tokens": options.get("max_tokens"),
    }
    if options.get("max_concurrency") is not None:
        common["max_concurrency"] = options["max_concurrency"]
    try:
        specs = {m: ModelSpec(model=m, **common) for m in options["samplers"]}
        reformulator = specs.get(options["reformulator"]) or ModelSpec(
            model=options["reformulator"], **common
        )
    except (ModelSpecError, TypeError) as e:
        raise ConfigurationError(f"run {run.pk}: bad LLM settings: {e}") from e
    return list(specs.values()), reformulator


def _execute(run: SamplingRun) -> None:
    from pipeline.checkers.consistency.calls import CallLedger
    from pipeline.checkers.consistency.models import ModelSpecError

    try:
        options = sampling_params(run.project, run.params)
        prices = prices_from(run.params, required=True)
        config = llm_config(run)
        samplers, reformulator = _specs(run, options, prices)
        run.refresh_from_db(fields=["cost", "budget"])
        keys = {}
        if reformulator.api_key_env and config.api_key:
            keys[reformulator.api_key_env] = config.api_key
        # One ledger for the execution: its budget is what the run has left,
        # so a retry after a transient failure does not spend it twice.
        ledger = CallLedger(
            [*samplers, reformulator],
            api_keys=keys,
            budget_usd=float(run.budget - run.cost),
            timeout=config.timeout,
            max_retries=config.max_retries,
        )
    except (ConfigurationError, ApplicationError, ModelSpecError) as e:
        sampling_run_fail(run_id=run.pk, error=str(e))
        raise ConfigurationError(str(e)) from e
    project = run.project

    def todo() -> QuerySet[Document]:
        return unsampled(project).order_by("pk")

    ids = list(todo().values_list("pk", flat=True))
    run.refresh_from_db()
    run.progress_total = run.progress_done + len(ids)
    run.save(update_fields=["progress_total"])
    sampled = 0
    try:
        with ThreadPoolExecutor(max_workers=max(1, ledger.slots)) as calls:
            for chunk in batched(ids, BATCH_SIZE):
                run.refresh_from_db(
                    fields=["cancel_requested", "cost", "progress_done"]
                )
                if run.cancel_requested:
                    run_end(SamplingRun, run.pk, RunStatus.CANCELLED)
                    return
                # Sampled since the list was made (an import with samples): skipped.
                batch = list(todo().filter(pk__in=chunk))
                if not batch:
                    continue
                projected = run.cost + _batch_estimate(run, batch, options, prices)
                if projected > run.budget:
                    run_end(
                        SamplingRun,
                        run.pk,
                        RunStatus.SUCCEEDED,
                        note=f"Stopped before the budget: the next {len(batch)} "
                        f"answers would bring the cost to about {projected} of "
                        f"{run.budget}; {todo().count()} answers left without samples.",
                    )
                    return
                before = _usage(ledger)
                outcomes = _sample_batch(
                    batch,
                    samplers=samplers,
                    reformulator=reformulator,
                    ledger=ledger,
                    pool=calls,
                    options=options,
                )
                failures = [
                    (d, o, _failure_kind(o))
                    for d, o in zip(batch, outcomes, strict=True)
                    if isinstance(o, Exception)
                ]
                sampled += _batch_save(
                    run_id=run.pk,
                    prices=prices,
                    spent=_usage_delta(before, _usage(ledger)),
                    samples=[
                        (d, o)
                        for d, o in zip(batch, outcomes, strict=True)
                        if not isinstance(o, Exception)
                    ],
                    failed=[(d, e) for d, e, kind in failures if kind == ANSWER],
                )
                if any(kind == BUDGET for _, _, kind in failures):
                    run_end(
                        SamplingRun,
                        run.pk,
                        RunStatus.SUCCEEDED,
                        note=f"Stopped before the budget: {ledger.stopped}; "
                        f"{todo().count()} answers left without samples.",
                    )
                    return
                for kind, raise_as in (
                    (RUN, ConfigurationError),
                    (TRANSIENT, TransientError),
                ):
                    error = next((e for _, e, k in failures if k == kind), None)
                    if error is not None:
                        if kind == TRANSIENT and _cancel_requested(run.pk):
                            # Asked to stop while the SDK retried: no task retry.
                            run_end(SamplingRun, run.pk, RunStatus.CANCELLED)
                            return
                        if kind == RUN:
                            sampling_run_fail(run_id=run.pk, error=str(error))
                        raise raise_as(str(error)) from error
        left = todo().count()
        run_end(
            SamplingRun,
            run.pk,
            RunStatus.SUCCEEDED,
            note=f"{left} answers left without samples; a later run tries them again."
            if left
            else "",
        )
    finally:
        if sampled:
            # The sampled answers' blocks were reset: the check judges them,
            # however the run ended.
            check_enqueue(project.pk)


def _cancel_requested(run_id: int) -> bool:
    return SamplingRun.objects.filter(pk=run_id, cancel_requested=True).exists()


def _sample_batch(batch: list[Document], **options) -> list:
    """Each answer's samples or the error it raised, the answers at once:
    their calls share the ledger's slots."""
    with ThreadPoolExecutor(max_workers=len(batch)) as runner:
        return list(runner.map(lambda d: _sample(d, **options), batch))


def _sample(document: Document, *, samplers, reformulator, ledger, pool, options):
    """The library's samples of one answer, or the error it raised (others
    are bugs)."""
    from pipeline.checkers.consistency.items import item_from_document
    from pipeline.errors import PipelineError

    item = item_from_document(document_record(document, external=True))
    try:
        return _library().sample_item(
            item,
            samplers=samplers,
            reformulator=reformulator,
            ledger=ledger,
            pool=pool,
            count=options["samples"],
            variants=options["variants"],
            seed=options["seed"],
        )
    except PipelineError as e:  # BudgetExceeded, LLMError
        return e


def _usage(ledger) -> dict[str, tuple[int, int, int]]:
    return {
        name: (u["prompt_tokens"], u["completion_tokens"], u["requests"])
        for name, u in ledger.tally.to_json()["models"].items()
    }


def _usage_delta(before, after) -> dict[str, tuple[int, int, int]]:
    zero = (0, 0, 0)
    return {
        name: tuple(a - b for a, b in zip(now, before.get(name, zero), strict=True))
        for name, now in after.items()
        if now != before.get(name, zero)
    }


def _batch_estimate(
    run: SamplingRun, batch: list[Document], options: dict[str, Any], prices: Prices
) -> Decimal:
    """The batch's cost from its prompts' length, or from what the run has
    paid per answer so far when that is more."""
    prompt = completion = 0
    for document in batch:
        _, _, p, c = _document_estimate(document, options)
        prompt, completion = prompt + p, completion + c
    estimate = cost(prices, prompt, completion)
    if run.progress_done:
        estimate = max(estimate, run.cost / run.progress_done * len(batch))
    return estimate


def _has_samples(metadata: Any) -> bool:
    return isinstance(metadata, dict) and bool(metadata.get("samples"))


def _batch_save(*, run_id, prices, spent, samples, failed) -> int:
    """One batch's samples, usage and unusable answers, in one transaction;
    returns how many answers got their samples."""
    from pipeline.checkers.consistency.items import sample_to_json

    for d, error in failed:
        logger.warning("sampling run %s: document %s: %s", run_id, d.pk, error)
    sampled = []
    with transaction.atomic():
        rows = {
            row.pk: row
            for row in Document.objects.select_for_update().filter(
                pk__in=[d.pk for d, _ in samples]
            )
        }
        for document, made in samples:
            row = rows.get(document.pk)
            # Deleted, sampled by an import meanwhile, or asked another prompt
            # since: these samples answer nothing that is there now.
            if (
                row is None
                or _has_samples(row.metadata)
                or row.metadata.get("prompt") != document.metadata.get("prompt")
            ):
                continue
            row.metadata = {
                **row.metadata,
                "samples": [sample_to_json(s) for s in made],
            }
            row.save(update_fields=["metadata", "updated_at"])
            sampled.append(row.pk)
        # The blocks were judged without samples: forget those verdicts so
        # the check judges them again (as an import changing them does).
        predictions_reset(Prediction.objects.filter(document_id__in=sampled))
        run = SamplingRun.objects.select_for_update().get(pk=run_id)
        run.progress_done += len(samples) + len(failed)
        usage = dict(run.usage)
        for name, (prompt, completion, requests) in spent.items():
            was = usage.get(name, {})
            usage[name] = {
                "prompt_tokens": was.get("prompt_tokens", 0) + prompt,
                "completion_tokens": was.get("completion_tokens", 0) + completion,
                "requests": was.get("requests", 0) + requests,
            }
            run.prompt_tokens += prompt
            run.completion_tokens += completion
        run.usage = usage
        run.cost = cost(prices, run.prompt_tokens, run.completion_tokens)
        run.heartbeat_at = timezone.now()
        lines = run.error.splitlines()
        for d, error in failed:
            if len(lines) < _MAX_ERROR_LINES:
                lines.append(f"document {d.pk} ({d.external_id}): {error}")
            elif len(lines) == _MAX_ERROR_LINES:
                lines.append("more failures in the worker log")
        run.error = "\n".join(lines)
        run.save(
            update_fields=[
                "progress_done",
                "prompt_tokens",
                "completion_tokens",
                "usage",
                "cost",
                "error",
                "heartbeat_at",
            ]
        )
    return len(sampled)

"""Consistency runs: budgeted LLM calls for a consistency project's answers.

FINCH-ZK needs models besides the one that answered: samplers whose answers
are the evidence (paper 2.3, A.2), and an improver correcting the blocks they
contradict (2.4, 2.5). A run does one of these jobs (:mod:`.sampling`,
:mod:`.corrections`) over the answers that need it, in batches, through the
library's call ledger. It costs money per call, so it shows an estimate
before it starts and stops before passing its budget. Each answer's result
goes into its document's metadata, where the checker reads it, and the
answer's blocks are reset so the check judges them again with it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.utils import timezone

from annotator.claims.checking import check_enqueue, claims_reset
from annotator.claims.ingest import batched
from annotator.core.errors import ApplicationError, ConfigurationError, TransientError
from annotator.kinds.consistency.corrections import CORRECTIONS
from annotator.kinds.consistency.jobs import TOKENS_PER_CALL, Job
from annotator.kinds.consistency.models import ConsistencyRun
from annotator.kinds.consistency.sampling import SAMPLES
from annotator.models import (
    Claim,
    Document,
    Project,
    RunStatus,
)
from annotator.runs.budgets import (
    ANSWER,
    PRICE_KEYS,
    RUN,
    TRANSIENT,
    Prices,
    batch_estimate,
    budget_from,
    cost,
    llm_config,
    llm_failure_kind,
    llm_params_check,
    run_prices,
)
from annotator.runs.lifecycle import (
    run_cancel,
    run_create_alone,
    run_end,
    run_execute_alone,
)
from pipeline.checkers.consistency.calls import BudgetExceeded, CallLedger
from pipeline.checkers.consistency.models import (
    DEFAULT_TEMPERATURE,
    ModelSpec,
    ModelSpecError,
)
from pipeline.errors import PipelineError

logger = logging.getLogger(__name__)

#: The project kind whose answers these runs serve.
KIND = "consistency"
#: Answers per batch: the budget is checked before each one, and the batch's
#: results are stored (and its cost booked) together.
BATCH_SIZE = 4
# High bits of the Postgres advisory lock key held by whoever executes a run
# (grading's are 0x5AFE).
_LOCK_CLASS = 0x5AFF
_MAX_ERROR_LINES = 50
#: LLM settings a run may set on its calls.
_SETTINGS = ("temperature", "max_tokens", "max_concurrency", "timeout", "max_retries")
BUDGET = "budget"


#: The jobs a run can do, by ``ConsistencyRun.job``.
JOBS: dict[str, Job] = {SAMPLES.name: SAMPLES, CORRECTIONS.name: CORRECTIONS}


def job_of(name: Any) -> Job:
    """The job named ``name``.

    Raises:
        ApplicationError: no such job.
    """
    if name not in JOBS:
        raise ApplicationError(f"job must be one of {sorted(JOBS)}, got {name!r}")
    return JOBS[name]


# --- params ------------------------------------------------------------------


def run_params(project: Project, job: Job, params: Any) -> dict[str, Any]:
    """The run's params checked, as it stores them: the job's options with
    their defaults, and LLM settings within the deployment's bounds.

    Raises:
        ApplicationError: a project of another kind, a model it does not
            allow (named), a price (the deployment sets them), or a malformed
            or out-of-bounds value (named).
    """
    if project.kind != KIND:
        raise ApplicationError(
            f"project {project.name!r} is of kind {project.kind!r}; {job.noun} "
            f"runs are for {KIND} projects"
        )
    llm_params_check(params, settings_known=_SETTINGS, options=job.option_keys)
    return {**params, **job.options(project, params)}


# --- estimate ----------------------------------------------------------------


@dataclass(frozen=True)
class RunEstimate:
    job: str
    models: list[str]
    documents: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost: Decimal | None
    calls_by_kind: dict[str, int] = field(default_factory=dict)


def run_estimate(
    project: Project, job: Any, params: Any, *, budget: Any = None
) -> RunEstimate:
    """What a run of ``job`` with ``params`` would ask and roughly cost; it
    calls nobody. The cost, at the deployment's prices, is ``None`` when a
    model has none.

    Raises:
        ApplicationError: params refused (:func:`run_params`), or a
            ``budget`` given for a model without a price.
    """
    job = job_of(job)
    options = run_params(project, job, params)
    if budget is not None:
        budget_from(budget)
    prices = run_prices(job.models(options), required=budget is not None)
    return options_estimate(project, job, options, prices=prices)


def options_estimate(
    project: Project, job: Job, options: dict[str, Any], *, prices: Prices | None
) -> RunEstimate:
    """:func:`run_estimate` of ``options`` already checked (:func:`run_params`)
    and their ``prices`` (``None``: no cost)."""
    by_kind = dict.fromkeys(job.call_kinds, 0)
    prompt = completion = n = 0
    for document, data in job.todo(project):
        n += 1
        calls = job.estimate(document, data, options)
        for kind, count in calls.by_kind.items():
            by_kind[kind] += count
        prompt += calls.prompt_tokens
        completion += calls.completion_tokens
    total = sum(by_kind.values())
    prompt += total * TOKENS_PER_CALL
    return RunEstimate(
        job=job.name,
        models=job.models(options),
        documents=n,
        calls=total,
        prompt_tokens=prompt,
        completion_tokens=completion,
        cost=cost(prices, prompt, completion) if prices else None,
        calls_by_kind=by_kind,
    )


# --- runs --------------------------------------------------------------------


def consistency_run_start(
    *,
    project: Project,
    job: Any = ConsistencyRun.Job.SAMPLES,
    budget: Decimal | float | str,
    params: dict[str, Any],
    created_by=None,
) -> ConsistencyRun:
    """Create a run and enqueue it on commit.

    Refused for a project of another kind, a model it does not allow,
    without an LLM, for a model the deployment has no price for (the budget
    is money), with a price in ``params`` (the deployment sets them), a
    setting or a budget outside the deployment's bounds, or while the
    project has a consistency run pending or running: a correction made while
    samples change would answer old judgements.
    """
    budget = budget_from(budget)
    job = job_of(job)
    options = run_params(project, job, params)
    estimate = options_estimate(
        project, job, options, prices=run_prices(job.models(options))
    )

    return run_create_alone(
        ConsistencyRun,
        project=project,
        noun=lambda active: active.job,
        job=job.name,
        model=job.models(options)[0],
        params=options,
        budget=budget,
        cost_estimate=estimate.cost,
        progress_total=estimate.documents,
        created_by=created_by,
    )


def consistency_run_cancel(*, run: ConsistencyRun) -> ConsistencyRun:
    """Ask a run to stop before its next batch; one no worker holds stops now."""
    return run_cancel(run, lock_class=_LOCK_CLASS, noun=run.job)


def consistency_run_fail(*, run_id: int, error: str) -> None:
    """Record a permanent failure on the run (its task will not retry)."""
    run_end(ConsistencyRun, run_id, RunStatus.FAILED, note=error)


def _failure_kind(error: Exception) -> str:
    """Whose failure an answer's is: its own (ANSWER), the moment's
    (TRANSIENT, retry later), the run's (RUN) or the budget's."""

    if isinstance(error, BudgetExceeded):
        return BUDGET
    return llm_failure_kind(error)


def consistency_run_execute(*, run_id: int) -> ConsistencyRun:
    """Do a run's job on its answers in batches until done, budget, or cancel.

    Safe to run twice or after a crash: one worker executes a run at a time
    (an advisory lock), and only answers still to do are sent. A batch's
    results are stored with its usage; a call the budget could not pay for
    is not sent, and the run stops there keeping what finished. An unusable
    answer is recorded on the run and its document stays to do; a transient
    failure (network, 429, 5xx after the SDK's retries) raises TransientError
    for the task to retry; a configuration problem, a wrong key or an unknown
    model fails the run.
    """
    return run_execute_alone(
        ConsistencyRun, run_id, lock_class=_LOCK_CLASS, execute=_execute
    )


def _specs(run: ConsistencyRun, models: Sequence[str], options, prices: Prices):
    """The library's model configuration of each model the run calls: the
    project's endpoint and key, the run's prices (:func:`run_prices`) and
    LLM settings."""

    project = run.project
    common = {
        "base_url": project.llm_base_url,
        "api_key_env": project.llm_api_key_env or None,
        # The run's one price, the dearest of its models': the ledger
        # keeps the budget the run books.
        "price_per_mtok_prompt": float(prices[0]),
        "price_per_mtok_completion": float(prices[1]),
        "temperature": options.get("temperature", DEFAULT_TEMPERATURE),
        "max_tokens": options.get("max_tokens"),
    }
    if options.get("max_concurrency") is not None:
        common["max_concurrency"] = options["max_concurrency"]
    try:
        return {m: ModelSpec(model=m, **common) for m in dict.fromkeys(models)}
    except (ModelSpecError, TypeError) as e:
        raise ConfigurationError(f"run {run.pk}: bad LLM settings: {e}") from e


def _ledger(run: ConsistencyRun, job: Job):
    """The job's options, prices, model specs and one call ledger for this
    execution: its budget is what the run has left, so a retry after a
    transient failure does not spend it twice. A configuration problem fails
    the run."""

    # Runs started before the deployment set prices stored their own: ignored.
    params = {k: v for k, v in run.params.items() if k not in PRICE_KEYS}
    try:
        options = run_params(run.project, job, params)
        prices = run_prices(job.models(options))
        config = llm_config(run)
        specs = _specs(run, job.models(options), options, prices)
        run.refresh_from_db(fields=["cost", "budget"])
        keys = {}
        env = run.project.llm_api_key_env
        if env and config.api_key:
            keys[env] = config.api_key
        ledger = CallLedger(
            list(specs.values()),
            api_keys=keys,
            budget_usd=float(run.budget - run.cost),
            timeout=config.timeout,
            max_retries=config.max_retries,
        )
    except (ConfigurationError, ApplicationError, ModelSpecError) as e:
        consistency_run_fail(run_id=run.pk, error=str(e))
        raise ConfigurationError(str(e)) from e
    return options, prices, specs, ledger


def _execute(run: ConsistencyRun) -> None:
    job = job_of(run.job)
    options, prices, specs, ledger = _ledger(run, job)
    project = run.project
    ids = [d.pk for d, _ in job.todo(project)]
    run.refresh_from_db()
    run.progress_total = run.progress_done + len(ids)
    run.save(update_fields=["progress_total"])
    stored = 0

    def stop(note: str = "") -> None:
        """End the run, saying why and what is left when it stops early."""
        left = len(job.todo(project))
        if left and not note:
            note = "A later run tries them again"
        run_end(
            ConsistencyRun,
            run.pk,
            RunStatus.SUCCEEDED,
            note=f"{note}; {left} {job.left}." if note else "",
        )

    try:
        with ThreadPoolExecutor(max_workers=max(1, ledger.slots)) as calls:
            for chunk in batched(ids, BATCH_SIZE):
                run.refresh_from_db(
                    fields=["cancel_requested", "cost", "progress_done"]
                )
                if run.cancel_requested:
                    run_end(ConsistencyRun, run.pk, RunStatus.CANCELLED)
                    return
                # Done since the list was made (an import, a re-check): skipped.
                batch = job.todo(project, chunk)
                if not batch:
                    continue
                projected = run.cost + batch_estimate(
                    run,
                    batch,
                    prices,
                    tokens=lambda b: _batch_tokens(job, b, options),
                )
                if projected > run.budget:
                    stop(
                        f"Stopped before the budget: the next {len(batch)} answers "
                        f"would bring the cost to about {projected} of {run.budget}"
                    )
                    return
                before = _usage(ledger)
                outcomes = _work_batch(
                    job, batch, specs=specs, ledger=ledger, pool=calls, options=options
                )
                failures = [
                    (d, o, _failure_kind(o))
                    for (d, _), o in zip(batch, outcomes, strict=True)
                    if isinstance(o, Exception)
                ]
                stored += _batch_save(
                    run_id=run.pk,
                    job=job,
                    prices=prices,
                    spent=_usage_delta(before, _usage(ledger)),
                    results=[
                        (d, data, o)
                        for (d, data), o in zip(batch, outcomes, strict=True)
                        if not isinstance(o, Exception)
                    ],
                    failed=[(d, e) for d, e, kind in failures if kind == ANSWER],
                )
                if any(kind == BUDGET for _, _, kind in failures):
                    stop(f"Stopped before the budget: {ledger.stopped}")
                    return
                for kind, raise_as in (
                    (RUN, ConfigurationError),
                    (TRANSIENT, TransientError),
                ):
                    error = next((e for _, e, k in failures if k == kind), None)
                    if error is not None:
                        if kind == TRANSIENT and _cancel_requested(run.pk):
                            # Asked to stop while the SDK retried: no task retry.
                            run_end(ConsistencyRun, run.pk, RunStatus.CANCELLED)
                            return
                        if kind == RUN:
                            consistency_run_fail(run_id=run.pk, error=str(error))
                        raise raise_as(str(error)) from error
        stop()
    finally:
        if stored:
            # The stored answers' blocks were reset: the check judges them
            # (and shows their corrections), however the run ended.
            check_enqueue(project.pk)


def _cancel_requested(run_id: int) -> bool:
    return ConsistencyRun.objects.filter(pk=run_id, cancel_requested=True).exists()


def _work_batch(job: Job, batch, **options) -> list:
    """Each answer's result or the error it raised, the answers at once:
    their calls share the ledger's slots."""

    def one(unit):
        document, data = unit
        try:
            return job.work(document, data, **options)
        except PipelineError as e:  # BudgetExceeded, LLMError; others are bugs
            return e

    with ThreadPoolExecutor(max_workers=len(batch)) as runner:
        return list(runner.map(one, batch))


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


def _batch_tokens(job: Job, batch, options: dict[str, Any]) -> tuple[int, int]:
    """The (prompt, completion) tokens doing ``batch`` would take, from its
    prompts' length."""
    prompt = completion = 0
    for document, data in batch:
        calls = job.estimate(document, data, options)
        prompt += calls.prompt_tokens + sum(calls.by_kind.values()) * TOKENS_PER_CALL
        completion += calls.completion_tokens
    return prompt, completion


def _error_lines(run: ConsistencyRun, lines: list[str]) -> str:
    """The run's error text with ``lines`` added, up to a limit."""
    out = run.error.splitlines()
    for line in lines:
        if len(out) < _MAX_ERROR_LINES:
            out.append(line)
        elif len(out) == _MAX_ERROR_LINES:
            out.append("more in the worker log")
    return "\n".join(out)


def _batch_save(*, run_id, job: Job, prices, spent, results, failed) -> int:
    """One batch's results, usage, notes and unusable answers, in one
    transaction; returns how many answers got their result stored."""
    lines = []
    for d, error in failed:
        logger.warning("%s run %s: document %s: %s", job.name, run_id, d.pk, error)
        lines.append(f"document {d.pk} ({d.external_id}): {error}")
    stored = []
    with transaction.atomic():
        rows = {
            row.pk: row
            for row in Document.objects.select_for_update().filter(
                pk__in=[d.pk for d, _, _ in results]
            )
        }
        for document, data, (result, notes) in results:
            where = f"document {document.pk} ({document.external_id})"
            lines += [f"{where}: {note}" for note in notes]
            row = rows.get(document.pk)
            # Deleted meanwhile, or changed so the result answers nothing there.
            if row is None or not job.store(row, document, data, result):
                continue
            row.save(update_fields=["metadata", "updated_at"])
            stored.append(row.pk)
        # The blocks were judged without what was stored: forget those
        # verdicts so the check judges them again (as an import would).
        claims_reset(Claim.objects.filter(document_id__in=stored))
        run = ConsistencyRun.objects.select_for_update().get(pk=run_id)
        run.progress_done += len(results) + len(failed)
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
        run.error = _error_lines(run, lines)
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
    return len(stored)

"""Extraction runs: an LLM extracts entities from a project's documents.

Each document is its own transaction and the run resumes after a crash;
the openai client is imported only where a run executes. A run has a budget
(the deployment's default and cap) and stops before a document would pass
it; a project has one extraction run at a time.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import replace
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.db.models.functions import Length
from django.utils import timezone

from annotator.claims.checking import check_enqueue
from annotator.claims.ingest import ImportReport, claims_upsert
from annotator.claims.records import document_record
from annotator.core.errors import ApplicationError, ConfigurationError, TransientError
from annotator.kinds.extraction.models import ExtractionItem, ExtractionRun
from annotator.kinds.extraction.options import project_schema
from annotator.models import (
    ACTIVE_RUN_STATUSES,
    FINISHED_RUN_STATUSES,
    Document,
    Project,
    RunStatus,
)
from annotator.runs.budgets import (
    CLIENT_SETTINGS,
    Prices,
    batch_estimate,
    budget_from,
    cost,
    llm_config,
    llm_model_check,
    llm_params_check,
    run_prices,
)
from annotator.runs.lifecycle import run_claim, run_create_alone, run_end, run_ended
from pipeline.checkers.extraction.extract import extract_document
from pipeline.errors import PipelineError
from pipeline.llm import make_client

# Deliberate approximations, for the estimate and the budget check only (a
# run books its real usage): ~4 characters per token; each chunk of a
# document (the library's 12,000 characters) also carries the schema's
# prompt, a few hundred tokens; the answer quotes each entity with its
# context, about half the document's tokens. Once documents are done, the
# check takes what they cost on average when that is more.
CHARS_PER_TOKEN = 4
CHUNK_CHARS = 12_000
PROMPT_TOKENS_PER_CHUNK = 600
COMPLETION_SHARE = 0.5


def _tokens(lengths: Sequence[int]) -> tuple[int, int]:
    """The (prompt, completion) tokens extracting documents of ``lengths``
    characters would take."""
    prompt = completion = 0
    for chars in lengths:
        text = math.ceil(chars / CHARS_PER_TOKEN)
        chunks = max(1, math.ceil(chars / CHUNK_CHARS))
        prompt += text + chunks * PROMPT_TOKENS_PER_CHUNK
        completion += math.ceil(text * COMPLETION_SHARE)
    return prompt, completion


def extraction_run_start(
    *,
    project: Project,
    model: str,
    params: dict[str, Any] | None = None,
    budget: Decimal | float | str | None = None,
    document_ids: Iterable[int] | None = None,
    created_by=None,
) -> ExtractionRun:
    """Create a run over the given documents (all of the project's by
    default), under ``budget`` (EXTRACTION_DEFAULT_BUDGET when None).

    Raises:
        ApplicationError: the project cannot run ``model``, the deployment
            has no price for it, a price in ``params`` (the deployment sets
            them), a setting or the budget outside the deployment's bounds,
            or the project has an extraction run pending or running.
    """
    llm_model_check(project, model)
    params = dict(params or {})
    llm_params_check(params, settings_known=CLIENT_SETTINGS)
    prices = run_prices(model)
    budget = budget_from(
        settings.EXTRACTION_DEFAULT_BUDGET if budget is None else budget
    )
    documents = Document.objects.filter(project=project)
    if document_ids is not None:
        documents = documents.filter(pk__in=list(document_ids))

    with transaction.atomic():
        # The task is sent when this outer transaction commits, items and all.
        run = run_create_alone(
            ExtractionRun,
            project=project,
            noun="extraction",
            model=model,
            params=params,
            budget=budget,
            created_by=created_by,
        )
        lengths = dict(
            documents.annotate(chars=Length("text")).values_list("pk", "chars")
        )
        ExtractionItem.objects.bulk_create(
            ExtractionItem(run=run, document_id=pk) for pk in lengths
        )
        run.progress_total = len(lengths)
        run.cost_estimate = cost(prices, *_tokens(list(lengths.values())))
        run.save(update_fields=["progress_total", "cost_estimate"])
    return run


def extraction_run_fail(*, run_id: int, error: str) -> None:
    """Record a permanent failure on the run (its task will not retry)."""
    run_end(ExtractionRun, run_id, RunStatus.FAILED, note=error)


def extraction_run_execute(*, run_id: int) -> ExtractionRun:
    """Extract every pending document of a run, one transaction per document.

    Safe to run twice or after a crash: only items still pending are done.
    A document the LLM cannot handle is recorded on its item and the run goes
    on; a transient failure (network, 429, 5xx after the SDK's own retries)
    raises TransientError with the item still pending, for the task to retry.
    A configuration problem fails the whole run.
    """

    run = ExtractionRun.objects.select_related("project").get(pk=run_id)
    if run.status in (RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.CANCELLED):
        return run
    run_claim(ExtractionRun, run_id)
    try:
        config = llm_config(run)
        prices = run_prices(run.model)
        schema = project_schema(run.project)
        if schema is None:
            raise ConfigurationError(
                f"project {run.project.name!r} has no entity schema to extract"
            )
    except (ConfigurationError, ApplicationError) as e:
        extraction_run_fail(run_id=run_id, error=str(e))
        raise ConfigurationError(str(e)) from e
    # Runs started before extraction had budgets get the deployment's default.
    budget = run.budget or Decimal(str(settings.EXTRACTION_DEFAULT_BUDGET))
    client = make_client(config)
    while True:
        # The row lock is held for the LLM call of one document: a second
        # worker on the same run skips to the next document, and a crash
        # releases the lock with the item still pending.
        with transaction.atomic():
            item = (
                ExtractionItem.objects.select_for_update(skip_locked=True)
                .filter(run_id=run_id, status=RunStatus.PENDING)
                .select_related("document")
                .order_by("pk")
                .first()
            )
            if item is None:
                break
            document = item.document
            run.refresh_from_db(fields=["cost", "progress_done", "cancel_requested"])
            if run.cancel_requested:
                return _run_stop(run_id, RunStatus.CANCELLED, "Cancelled")
            projected = run.cost + batch_estimate(
                run, [len(document.text)], prices, tokens=_tokens
            )
            if projected > budget:
                return _run_stop(
                    run_id,
                    RunStatus.SUCCEEDED,
                    f"Stopped before the budget: the next document would bring "
                    f"the cost to about {projected} of {budget}",
                )
            try:
                result = extract_document(
                    client,
                    config,
                    document_record(document, external=True),
                    schema,
                )
            except PipelineError as e:
                # A failed call (pipeline.llm.LLMError.transient) is worth
                # retrying; a malformed extraction would fail the same way.
                if getattr(e, "transient", False):
                    raise TransientError(f"document {document.external_id}: {e}") from e
                item.status, item.error = RunStatus.FAILED, str(e)
                item.save(update_fields=["status", "error", "updated_at"])
                _run_add_usage(run_id, getattr(e, "usage", None), prices, done=1)
                continue
            _extraction_item_save(run=run, item=item, result=result, prices=prices)
    return _run_finish(run_id)


def extraction_run_cancel(*, run: ExtractionRun) -> ExtractionRun:
    """Ask a run to stop before its next document; one no worker has started
    stops now. Its documents left are cancelled on it, for a later run.

    Raises:
        ApplicationError: the run has already ended.
    """
    if run.status in FINISHED_RUN_STATUSES:
        raise ApplicationError(f"extraction run {run.pk} already {run.status}")
    ExtractionRun.objects.filter(pk=run.pk).update(cancel_requested=True)
    if run.status == RunStatus.PENDING:
        return _run_stop(run.pk, RunStatus.CANCELLED, "Cancelled before it started")
    run.refresh_from_db()
    return run


def _run_stop(run_id: int, status: RunStatus, why: str) -> ExtractionRun:
    """End the run with ``status`` before its next document (``why`` it
    stops: cancelled, or that document would take it past its budget); the
    documents left are cancelled on the run, for a later one, and what it
    extracted is checked."""
    left = ExtractionItem.objects.filter(run_id=run_id, status=RunStatus.PENDING)
    count = left.update(
        status=RunStatus.CANCELLED,
        error=f"not extracted: {why[:1].lower()}{why[1:]}",
        updated_at=timezone.now(),
    )
    note = f"{why}; {count} documents left for a later run."
    if run_end(ExtractionRun, run_id, status, note=note):
        check_enqueue(ExtractionRun.objects.get(pk=run_id).project_id)
    return ExtractionRun.objects.get(pk=run_id)


def _extraction_item_save(
    *, run: ExtractionRun, item: ExtractionItem, result, prices: Prices
) -> None:
    if result.error:
        item.status, item.error = RunStatus.FAILED, str(result.error)
    else:
        item.status = RunStatus.SUCCEEDED
        report = ImportReport()
        document_key = item.document.external_id
        # The pipeline's ids ("{document}:{model}:{n}") make re-extracting a
        # document with the same model update its claims, not add more.
        records: list[tuple[int | None, Any]] = [
            (None, p if p.id else _with_id(p, f"{document_key}:{run.model}:{i}"))
            for i, p in enumerate(result.claims)
        ]
        rows = claims_upsert(
            project=run.project,
            records=records,
            report=report,
            source=f"run {run.pk}",
            source_run=run,
        )
        if report.errors:
            item.error = "; ".join(e.message for e in report.errors)
        item.claim_count = len(rows)
    item.save(update_fields=["status", "error", "claim_count", "updated_at"])
    _run_add_usage(run.pk, result.usage, prices, done=1)


def _with_id(p, new_id: str):
    return replace(p, id=new_id)


def _run_add_usage(run_id: int, usage, prices: Prices, *, done: int) -> None:
    prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
    completion = int(getattr(usage, "completion_tokens", 0) or 0)
    # Added, not recomputed from the totals: workers sharing a run each add
    # theirs (one rounding to the micro-unit per document).
    ExtractionRun.objects.filter(pk=run_id).update(
        heartbeat_at=timezone.now(),
        progress_done=F("progress_done") + done,
        prompt_tokens=F("prompt_tokens") + prompt,
        completion_tokens=F("completion_tokens") + completion,
        cost=F("cost") + cost(prices, prompt, completion),
    )


def _run_finish(run_id: int) -> ExtractionRun:
    with transaction.atomic():
        run = ExtractionRun.objects.select_for_update().get(pk=run_id)
        if run.status != RunStatus.RUNNING:
            return run
        if run.items.filter(status__in=ACTIVE_RUN_STATUSES).exists():
            return run  # another worker still holds a document
        items = run.items.all()
        failed = items.filter(status=RunStatus.FAILED).count()
        run.status = (
            RunStatus.FAILED
            if failed and failed == items.count()
            else RunStatus.SUCCEEDED
        )
        if failed:
            run.error = f"{failed} of {items.count()} documents failed"
        run.finished_at = timezone.now()
        run.save(update_fields=["status", "error", "finished_at"])
        run_ended(ExtractionRun, run_id)
        check_enqueue(run.project_id)
    return run

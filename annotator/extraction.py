"""Extraction runs: an LLM extracts entities from a project's documents.

Each document is its own transaction and the run resumes after a crash;
the openai client is imported only where a run executes.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from . import allowlists
from .checking import check_enqueue, project_schema
from .dispatch import send_after_commit
from .errors import ConfigurationError, TransientError
from .ingest import ImportReport, predictions_upsert
from .llm_costs import cost, llm_model_check, prices_from
from .models import (
    ACTIVE_RUN_STATUSES,
    Document,
    ExtractionItem,
    ExtractionRun,
    Project,
    RunStatus,
)
from .records import document_record
from .runs import run_claim, run_end, run_ended


def extraction_run_start(
    *,
    project: Project,
    model: str,
    params: dict[str, Any] | None = None,
    document_ids: Iterable[int] | None = None,
    created_by=None,
) -> ExtractionRun:
    """Create a run over the given documents (all of the project's by default).

    Raises:
        ApplicationError: the project cannot run ``model``, or a price in
            ``params`` is not a number.
    """
    llm_model_check(project, model)
    prices_from(params or {}, required=False)
    documents = Document.objects.filter(project=project)
    if document_ids is not None:
        documents = documents.filter(pk__in=list(document_ids))
    with transaction.atomic():
        run = ExtractionRun.objects.create(
            project=project, model=model, params=params or {}, created_by=created_by
        )
        ExtractionItem.objects.bulk_create(
            ExtractionItem(run=run, document_id=pk)
            for pk in documents.values_list("pk", flat=True)
        )
        run.progress_total = run.items.count()
        run.save(update_fields=["progress_total"])
        from . import tasks

        send_after_commit(tasks.run_extraction, run.pk)
    return run


def llm_config(run: ExtractionRun):
    from pipeline.llm import LLMConfig

    project = run.project
    # Rows written before the allow-lists, or the lists narrowed since: no
    # request leaves the server for an endpoint or key the deployment refuses.
    problem = allowlists.llm_base_url_problem(
        project.llm_base_url
    ) or allowlists.llm_api_key_env_problem(project.llm_api_key_env)
    if problem:
        raise ConfigurationError(f"project {project.name!r}: {problem}")
    api_key = None
    if project.llm_api_key_env:
        api_key = os.environ.get(project.llm_api_key_env)
        if not api_key:
            raise ConfigurationError(
                f"environment variable {project.llm_api_key_env} is not set on the "
                "worker (the project's llm_api_key_env)"
            )
    params = dict(run.params)
    for key in ("price_per_mtok_prompt", "price_per_mtok_completion"):
        params.pop(key, None)
    known = {"timeout", "max_retries", "temperature", "json_mode"}
    try:
        return LLMConfig(
            base_url=project.llm_base_url,
            model=run.model,
            api_key=api_key,
            **{k: v for k, v in params.items() if k in known},
            extra={k: v for k, v in params.items() if k not in known},
        )
    except (TypeError, ValueError) as e:
        raise ConfigurationError(f"run {run.pk}: bad LLM settings: {e}") from e


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
    from pipeline.checkers.extraction.extract import extract_document
    from pipeline.errors import PipelineError
    from pipeline.llm import make_client

    run = ExtractionRun.objects.select_related("project").get(pk=run_id)
    if run.status in (RunStatus.SUCCEEDED, RunStatus.FAILED):
        return run
    run_claim(ExtractionRun, run_id)
    try:
        config = llm_config(run)
        schema = project_schema(run.project)
        if schema is None:
            raise ConfigurationError(
                f"project {run.project.name!r} has no entity schema to extract"
            )
    except ConfigurationError as e:
        extraction_run_fail(run_id=run_id, error=str(e))
        raise
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
                _run_add_usage(run_id, getattr(e, "usage", None), done=1)
                continue
            _extraction_item_save(run=run, item=item, result=result)
    return _run_finish(run_id)


def _extraction_item_save(*, run: ExtractionRun, item: ExtractionItem, result) -> None:
    if result.error:
        item.status, item.error = RunStatus.FAILED, str(result.error)
    else:
        item.status = RunStatus.SUCCEEDED
        report = ImportReport()
        document_key = item.document.external_id
        # The pipeline's ids ("{document}:{model}:{n}") make re-extracting a
        # document with the same model update its predictions, not add more.
        records = [
            (None, p if p.id else _with_id(p, f"{document_key}:{run.model}:{i}"))
            for i, p in enumerate(result.predictions)
        ]
        rows = predictions_upsert(
            project=run.project,
            records=records,
            report=report,
            source=f"run {run.pk}",
            source_run=run,
        )
        if report.errors:
            item.error = "; ".join(e.message for e in report.errors)
        item.prediction_count = len(rows)
    item.save(update_fields=["status", "error", "prediction_count", "updated_at"])
    _run_add_usage(run.pk, result.usage, done=1)


def _with_id(p, new_id: str):
    from dataclasses import replace

    return replace(p, id=new_id)


def _run_add_usage(run_id: int, usage, *, done: int) -> None:

    ExtractionRun.objects.filter(pk=run_id).update(
        heartbeat_at=timezone.now(),
        progress_done=F("progress_done") + done,
        prompt_tokens=F("prompt_tokens") + int(getattr(usage, "prompt_tokens", 0) or 0),
        completion_tokens=F("completion_tokens")
        + int(getattr(usage, "completion_tokens", 0) or 0),
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
        prices = prices_from(run.params, required=False)
        run.cost_estimate = (
            cost(prices, run.prompt_tokens, run.completion_tokens) if prices else None
        )
        run.finished_at = timezone.now()
        run.save(update_fields=["status", "error", "cost_estimate", "finished_at"])
        run_ended(ExtractionRun, run_id)
        check_enqueue(run.project_id)
    return run

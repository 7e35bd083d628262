"""The statement kind's LLM job: an LLM writes statements about each of a
project's documents, which become the project's claims and are checked.

Built from the shared run parts only (``annotator.runs``): one lifecycle,
the deployment's prices and bounds, the project's allow-listed endpoint.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db.models import F
from django.db.models.functions import Length
from django.utils import timezone

from annotator.claims.checking import check_enqueue
from annotator.claims.ingest import ImportReport, claims_upsert
from annotator.core.errors import ApplicationError, ConfigurationError, TransientError
from annotator.models import Document, Project, RunStatus
from annotator.runs.budgets import (
    CLIENT_SETTINGS,
    TRANSIENT,
    batch_estimate,
    budget_from,
    cost,
    llm_config,
    llm_failure_kind,
    llm_model_check,
    llm_params_check,
    run_prices,
)
from annotator.runs.lifecycle import (
    run_cancel,
    run_create_alone,
    run_end,
    run_execute_alone,
)
from pipeline.llm import LLMError, chat_json, make_client
from pipeline.types import Claim
from tests.kinds.statement.models import StatementRun

LOCK_CLASS = 0x5B10
PROMPT = "List short statements the document makes, one fact each."
SCHEMA = {
    "type": "object",
    "properties": {"statements": {"type": "array", "items": {"type": "string"}}},
    "required": ["statements"],
    "additionalProperties": False,
}
# For the estimate only: ~4 characters a token, ~20 tokens a statement.
CHARS_PER_TOKEN = 4
TOKENS_PER_STATEMENT = 20


@dataclass(frozen=True)
class StatementEstimate:
    model: str
    documents: int
    prompt_tokens: int
    completion_tokens: int
    cost: Decimal | None


def _tokens(lengths: Sequence[int]) -> tuple[int, int]:
    prompt = sum(math.ceil((n + len(PROMPT)) / CHARS_PER_TOKEN) for n in lengths)
    per_document = settings.STATEMENT_MAX_PER_DOCUMENT * TOKENS_PER_STATEMENT
    return prompt, len(lengths) * per_document


def statement_estimate(
    project: Project, model: str, params: dict[str, Any] | None = None
) -> StatementEstimate:
    llm_model_check(project, model)
    llm_params_check(params or {}, settings_known=CLIENT_SETTINGS)
    prices = run_prices(model, required=False)
    lengths = list(
        Document.objects.filter(project=project)
        .annotate(n=Length("text"))
        .values_list("n", flat=True)
    )
    prompt, completion = _tokens(lengths)
    return StatementEstimate(
        model=model,
        documents=len(lengths),
        prompt_tokens=prompt,
        completion_tokens=completion,
        cost=cost(prices, prompt, completion) if prices else None,
    )


def statement_run_start(
    *, project: Project, model: str, budget, params=None, created_by=None
) -> StatementRun:
    budget = budget_from(budget)
    params = dict(params or {})
    estimate = statement_estimate(project, model, params)
    run_prices(model)
    return run_create_alone(
        StatementRun,
        project=project,
        noun="statements",
        model=model,
        params=params,
        budget=budget,
        cost_estimate=estimate.cost,
        progress_total=estimate.documents,
        created_by=created_by,
    )


def statement_run_cancel(*, run: StatementRun) -> StatementRun:
    return run_cancel(run, lock_class=LOCK_CLASS, noun="statements")


def statement_run_fail(*, run_id: int, error: str) -> None:
    run_end(StatementRun, run_id, RunStatus.FAILED, note=error)


def statement_run_execute(*, run_id: int) -> StatementRun:
    """Ask the LLM for each document not yet done, in order; resumable at
    the next document after a retry or a lost worker."""
    return run_execute_alone(
        StatementRun, run_id, lock_class=LOCK_CLASS, execute=_execute
    )


def _execute(run: StatementRun) -> None:
    try:
        config = llm_config(run)
        prices = run_prices(run.model)
    except (ConfigurationError, ApplicationError) as e:
        statement_run_fail(run_id=run.pk, error=str(e))
        raise ConfigurationError(str(e)) from e
    client = make_client(config)
    documents = Document.objects.filter(project=run.project).order_by("pk")
    for document in documents[run.progress_done :]:
        run.refresh_from_db(fields=["cost", "progress_done", "cancel_requested"])
        if run.cancel_requested:
            run_end(StatementRun, run.pk, RunStatus.CANCELLED)
            break
        estimate = batch_estimate(run, [len(document.text)], prices, tokens=_tokens)
        if run.cost + estimate > run.budget:
            run_end(
                StatementRun, run.pk, RunStatus.SUCCEEDED, note="stopped at the budget"
            )
            break
        messages = [
            {"role": "system", "content": PROMPT},
            {"role": "user", "content": document.text},
        ]
        try:
            answer, usage = chat_json(
                client, config, messages, SCHEMA, name="statements"
            )
        except LLMError as e:
            if llm_failure_kind(e) == TRANSIENT:
                raise TransientError(f"document {document.external_id}: {e}") from e
            statement_run_fail(
                run_id=run.pk, error=f"document {document.external_id}: {e}"
            )
            return
        _claims_save(run, document, answer["statements"])
        StatementRun.objects.filter(pk=run.pk).update(
            heartbeat_at=timezone.now(),
            progress_done=F("progress_done") + 1,
            prompt_tokens=F("prompt_tokens") + usage.prompt_tokens,
            completion_tokens=F("completion_tokens") + usage.completion_tokens,
            cost=F("cost") + cost(prices, usage.prompt_tokens, usage.completion_tokens),
        )
    else:
        run_end(StatementRun, run.pk, RunStatus.SUCCEEDED)
    check_enqueue(run.project_id)


def _claims_save(run: StatementRun, document: Document, statements: list[str]) -> None:
    """The statements as claims of the project; a run again over the same
    document updates them (their ids are the document's and the position)."""
    kept = statements[: settings.STATEMENT_MAX_PER_DOCUMENT]
    records = [
        (
            None,
            Claim(
                id=f"{document.external_id}#{i}",
                document_id=document.external_id,
                type="statement",
                value=text,
                context="",
                model=run.model,
            ),
        )
        for i, text in enumerate(kept)
    ]
    claims_upsert(
        project=run.project,
        records=records,
        report=ImportReport(),
        source=f"statement run {run.pk}",
        source_run=run,
    )

"""The LLM grader as silver labeller (paper 3.3.2 and 4.2.2).

When a project has an LLM, admins can have it grade the aligned claims
no expert has labelled, with the Appendix B prompt, to pre-train the scorer
on. It costs money per claim, so a run shows an estimate before it
starts, and stops before the next batch would take it past its budget.

Gold-set claims are never graded and never come back as silver labels:
gold labels measure scorers and must not feed training, even indirectly.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.db.models import (
    Count,
    Exists,
    OuterRef,
    QuerySet,
    Sum,
)
from django.db.models.functions import Coalesce, Length
from django.utils import timezone

from annotator.claims.ingest import batched
from annotator.core.errors import ApplicationError, ConfigurationError, TransientError
from annotator.labeling import gold
from annotator.models import (
    GRADER_SCORER_PREFIX,
    Claim,
    ClaimScore,
    GradingRun,
    Label,
    Project,
    Reason,
    RunStatus,
    Verdict,
)
from annotator.runs.budgets import (
    ANSWER,
    CLIENT_SETTINGS,
    RUN,
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
from pipeline.checkers import checker_class
from pipeline.errors import ScorerError
from pipeline.grader import GRADE_SCHEMA, THRESHOLD, LLMGrader
from pipeline.llm import LLMConfig

logger = logging.getLogger(__name__)

#: Claims graded per batch: the budget is checked before each one, so a
#: run passes its cap by at most one batch's error of estimate.
BATCH_SIZE = 8

# Deliberate approximations, for the estimate only (runs count real usage):
# ~4 characters per token is OpenAI's rule of thumb for English; each chat
# message adds ~3 tokens of framing plus ~3 to prime the reply (OpenAI
# cookbook, "counting tokens"); the paper's grader averaged ~100 output
# tokens per claim (section 4.3).
CHARS_PER_TOKEN = 4
TOKENS_PER_MESSAGE = 3
TOKENS_PER_REPLY = 3
COMPLETION_TOKENS_PER_CLAIM = 100

# High bits of the Postgres advisory lock key held by whoever executes a run.
_LOCK_CLASS = 0x5AFE
# Failures listed on a run; more are logged by the worker.
_MAX_ERROR_LINES = 50


def scorer_name(model: str) -> str:
    return f"{GRADER_SCORER_PREFIX}{model}"


def grader_prompt(project: Project):
    """What the grader asks of the project's claims: its kind's prompt.

    Raises:
        ApplicationError: the kind's claims are not graded by an LLM.
    """
    checker = checker_class(project.kind)
    if checker.grader_prompt is None:
        raise ApplicationError(
            f"{checker.title}: these claims are not graded by an LLM"
        )
    return checker.grader_prompt


def _grader(project: Project, model: str):
    """A pipeline LLMGrader without credentials: its prompt and version."""
    config = LLMConfig(base_url=project.llm_base_url, model=model)
    return LLMGrader(config, prompt=grader_prompt(project))


# --- reads -------------------------------------------------------------------


def _with_premise(project: Project) -> QuerySet[Claim]:
    """Checked claims with evidence: the grader reads the same premise
    and hypothesis as the scorer.

    On the training side of the gold split only."""
    queryset = (
        Claim.objects.filter(project=project)
        .exclude(verdict=Verdict.UNCHECKED)
        .exclude(reason=Reason.NOT_IN_DOCUMENT)
        .exclude(premise="")
        .exclude(hypothesis="")
    )
    return gold.restrict(queryset, project, gold=False)


def _expertly_labelled():
    # "unsure" is a pass, not a label (as in the labeling queue).
    return Exists(Label.objects.filter(claim=OuterRef("pk"), label__in=Label.DECISIVE))


def gradable(project: Project, *, model: str, version: str) -> QuerySet[Claim]:
    """Claims a grading run with ``model`` would grade: aligned, outside
    the gold set, no expert label, not graded yet by this model and prompt."""
    graded = ClaimScore.objects.filter(
        claim=OuterRef("pk"), scorer=scorer_name(model), scorer_version=version
    )
    return _with_premise(project).filter(~_expertly_labelled(), ~Exists(graded))


def grader_silver_labels(project: Project) -> dict[int, str]:
    """The LLM grader's labels: claim id -> "safe" / "unsafe".

    Gold documents and expertly labelled claims are left out as they are
    now (a label or a gold share set after the grading still counts), so are
    claims no longer aligned. When several models or prompt versions
    graded a claim, the latest grade wins.
    """
    claims = _with_premise(project).filter(~_expertly_labelled())
    rows = (
        ClaimScore.objects.filter(
            scorer__startswith=GRADER_SCORER_PREFIX, claim__in=claims
        )
        .order_by("claim_id", "-updated_at", "-pk")
        .distinct("claim_id")
        .values_list("claim_id", "score")
    )
    return {pk: "safe" if score >= THRESHOLD else "unsafe" for pk, score in rows}


# --- estimate ----------------------------------------------------------------


@dataclass(frozen=True)
class GradingEstimate:
    model: str
    scorer: str
    scorer_version: str
    claims: int
    prompt_tokens: int
    completion_tokens: int
    cost: Decimal | None


def _fixed_chars(prompt) -> int:
    """Characters every grading request carries whatever the claim: the
    system prompt, the user message's markup and the answer's schema."""
    schema = json.dumps(GRADE_SCHEMA, ensure_ascii=False)
    return len(prompt.system) + len(prompt.message("", "")) + len(schema)


def _prompt_tokens(*, chars: int, claims: int) -> int:
    framing = claims * (2 * TOKENS_PER_MESSAGE + TOKENS_PER_REPLY)
    return math.ceil(chars / CHARS_PER_TOKEN) + framing


def grading_estimate(
    project: Project, model: str, params: dict[str, Any] | None = None
) -> GradingEstimate:
    """What a grading run with ``model`` would grade and roughly cost.

    Token counts come from the length of the prompts the run would send (see
    CHARS_PER_TOKEN); the cost, at the deployment's prices, is ``None`` for a
    model it has none for.

    Raises:
        ApplicationError: the model or a param refused (named).
    """
    llm_model_check(project, model)
    llm_params_check(params or {}, settings_known=CLIENT_SETTINGS)
    prices = run_prices(model, required=False)
    grader = _grader(project, model)
    version = grader.version
    totals = gradable(project, model=model, version=version).aggregate(
        n=Count("pk"),
        chars=Coalesce(Sum(Length("premise") + Length("hypothesis")), 0),
    )
    n = totals["n"]
    chars = n * _fixed_chars(grader.prompt) + totals["chars"]
    prompt = _prompt_tokens(chars=chars, claims=n)
    completion = n * COMPLETION_TOKENS_PER_CLAIM
    return GradingEstimate(
        model=model,
        scorer=scorer_name(model),
        scorer_version=version,
        claims=n,
        prompt_tokens=prompt,
        completion_tokens=completion,
        cost=cost(prices, prompt, completion) if prices else None,
    )


# --- runs --------------------------------------------------------------------


def grading_run_start(
    *,
    project: Project,
    model: str,
    budget: Decimal | float | str,
    params: dict[str, Any] | None = None,
    created_by=None,
) -> GradingRun:
    """Create a run and enqueue it on commit.

    Refused without an LLM, for a model the deployment has no price for (the
    budget is money), with a price in ``params`` (the deployment sets them),
    a setting or a budget outside the deployment's bounds, or while the
    project has a run pending or running: two runs would grade the same
    claims.
    """
    budget = budget_from(budget)
    params = dict(params or {})
    estimate = grading_estimate(project, model, params)
    run_prices(model)

    return run_create_alone(
        GradingRun,
        project=project,
        noun="grading",
        model=model,
        params=params,
        budget=budget,
        cost_estimate=estimate.cost,
        progress_total=estimate.claims,
        created_by=created_by,
    )


def grading_run_cancel(*, run: GradingRun) -> GradingRun:
    """Ask a run to stop before its next batch; one no worker holds stops now."""
    return run_cancel(run, lock_class=_LOCK_CLASS, noun="grading")


def grading_run_fail(*, run_id: int, error: str) -> None:
    """Record a permanent failure on the run (its task will not retry), above
    the claims that failed before it."""
    run_end(GradingRun, run_id, RunStatus.FAILED, note=error)


def _failure_kind(error: Exception) -> str:
    """Whose failure a ScorerError from the grader is: that of the LLMError
    it was raised from (an unusable grade is this claim's)."""
    return llm_failure_kind(error.__cause__)


def grading_run_execute(*, run_id: int) -> GradingRun:
    """Grade a run's claims in batches until done, budget, or cancel.

    Safe to run twice or after a crash: a run is executed by one worker at a
    time (an advisory lock), and only claims without a grade from this
    model and prompt are sent. An unusable answer is recorded on the run and
    the claim stays ungraded; a transient failure (network, 429, 5xx
    after the SDK's retries) saves the batch's grades and raises
    TransientError for the task to retry; a configuration problem, a wrong
    key or an unknown model fails the run.
    """
    return run_execute_alone(
        GradingRun, run_id, lock_class=_LOCK_CLASS, execute=_execute
    )


def _execute(run: GradingRun) -> None:
    project, model = run.project, run.model
    try:
        config = llm_config(run)
        prices = run_prices(model)
        prompt = grader_prompt(project)
    except (ConfigurationError, ApplicationError) as e:
        grading_run_fail(run_id=run.pk, error=str(e))
        raise ConfigurationError(str(e)) from e
    llm = LLMGrader(config, prompt=prompt)

    def todo() -> QuerySet[Claim]:
        return gradable(project, model=model, version=llm.version).order_by("pk")

    ids = list(todo().values_list("pk", flat=True))
    run.refresh_from_db()
    run.progress_total = run.progress_done + len(ids)
    run.save(update_fields=["progress_total"])
    for chunk in batched(ids, BATCH_SIZE):
        run.refresh_from_db(fields=["cancel_requested", "cost", "progress_done"])
        if run.cancel_requested:
            run_end(GradingRun, run.pk, RunStatus.CANCELLED)
            return
        # Labelled or graded since the list was made: skipped.
        batch = list(
            todo()
            .filter(pk__in=chunk)
            .only("pk", "external_id", "premise", "hypothesis")
        )
        if not batch:
            continue
        projected = run.cost + batch_estimate(
            run, batch, prices, tokens=lambda b: _batch_tokens(b, prompt)
        )
        if projected > run.budget:
            run_end(
                GradingRun,
                run.pk,
                RunStatus.SUCCEEDED,
                note=f"Stopped before the budget: the next {len(batch)} "
                f"claims would bring the cost to about {projected} of "
                f"{run.budget}; {todo().count()} claims left ungraded.",
            )
            return
        spent_before = llm.usage
        with ThreadPoolExecutor(max_workers=BATCH_SIZE) as pool:
            outcomes = list(pool.map(lambda p: _grade(llm, p), batch))
        failures = [
            (p, o, _failure_kind(o))
            for p, o in zip(batch, outcomes, strict=True)
            if isinstance(o, Exception)
        ]
        _batch_save(
            run_id=run.pk,
            scorer=scorer_name(model),
            version=llm.version,
            prices=prices,
            spent=(
                llm.usage.prompt_tokens - spent_before.prompt_tokens,
                llm.usage.completion_tokens - spent_before.completion_tokens,
            ),
            grades=[
                (p, o)
                for p, o in zip(batch, outcomes, strict=True)
                if not isinstance(o, Exception)
            ],
            failed=[(p, e) for p, e, kind in failures if kind == ANSWER],
        )
        for kind, raise_as in ((RUN, ConfigurationError), (TRANSIENT, TransientError)):
            error = next((e for _, e, k in failures if k == kind), None)
            if error is not None:
                if kind == TRANSIENT and _cancel_requested(run.pk):
                    # Asked to stop while the SDK retried: no task retry.
                    run_end(GradingRun, run.pk, RunStatus.CANCELLED)
                    return
                if kind == RUN:
                    grading_run_fail(run_id=run.pk, error=str(error))
                raise raise_as(str(error)) from error
    left = todo().count()
    run_end(
        GradingRun,
        run.pk,
        RunStatus.SUCCEEDED,
        note=f"{left} claims left ungraded; a later run tries them again."
        if left
        else "",
    )


def _cancel_requested(run_id: int) -> bool:
    return GradingRun.objects.filter(pk=run_id, cancel_requested=True).exists()


def _grade(llm, claim: Claim):
    """The pipeline's Grade, or the ScorerError it raised (others are bugs)."""

    try:
        return llm.grade(claim.premise, claim.hypothesis)
    except ScorerError as e:
        return e


def _batch_tokens(batch: Sequence[Claim], prompt) -> tuple[int, int]:
    """The (prompt, completion) tokens grading ``batch`` with ``prompt``
    would take, from its messages' length."""
    chars = sum(len(p.premise) + len(p.hypothesis) for p in batch)
    n = len(batch)
    return (
        _prompt_tokens(chars=n * _fixed_chars(prompt) + chars, claims=n),
        n * COMPLETION_TOKENS_PER_CLAIM,
    )


def _batch_save(*, run_id, scorer, version, prices, spent, grades, failed) -> None:
    """One batch's grades, usage and unusable answers, in one transaction."""
    for p, error in failed:
        logger.warning("grading run %s: claim %s: %s", run_id, p.pk, error)
    with transaction.atomic():
        ClaimScore.objects.bulk_create(
            [
                ClaimScore(
                    claim=p,
                    scorer=scorer,
                    scorer_version=version,
                    score=g.score,
                    reasoning=g.reasoning,
                )
                for p, g in grades
            ],
            update_conflicts=True,
            unique_fields=["claim", "scorer", "scorer_version"],
            update_fields=["score", "reasoning", "updated_at"],
        )
        run = GradingRun.objects.select_for_update().get(pk=run_id)
        run.progress_done += len(grades) + len(failed)
        run.prompt_tokens += spent[0]
        run.completion_tokens += spent[1]
        run.cost = cost(prices, run.prompt_tokens, run.completion_tokens)
        run.heartbeat_at = timezone.now()
        # The claim stays ungraded, for a later run; the run says why.
        lines = run.error.splitlines()
        for p, error in failed:
            if len(lines) < _MAX_ERROR_LINES:
                lines.append(f"claim {p.pk} ({p.external_id}): {error}")
            elif len(lines) == _MAX_ERROR_LINES:
                lines.append("more failures in the worker log")
        run.error = "\n".join(lines)
        run.save(
            update_fields=[
                "progress_done",
                "prompt_tokens",
                "completion_tokens",
                "cost",
                "error",
                "heartbeat_at",
            ]
        )

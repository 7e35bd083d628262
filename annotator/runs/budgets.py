"""What every LLM run shares besides its lifecycle (:mod:`annotator.runs.lifecycle`):
the check of the model and settings it asks for, whose fault a failed call
is, and its money: prices and bounds from the deployment (issue 27), never
from the run's starter, and costs in the money fields' precision."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Collection, Iterable, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any, Literal, overload

from django.conf import settings

from annotator.core import allowlists
from annotator.core.errors import ApplicationError, ConfigurationError
from annotator.models import LLMRun, Project
from pipeline.llm import LLMConfig, LLMError

#: Params runs once took prices from; refused now (the deployment's
#: LLM_PRICES prices every call).
PRICE_KEYS = ("price_per_mtok_prompt", "price_per_mtok_completion")
#: The money fields' precision (decimal_places=6).
MICRO = Decimal("0.000001")
_MAX_BUDGET = Decimal(1_000_000)  # max_digits=12, 6 of them decimals

Prices = tuple[Decimal, Decimal]

#: Whose failure a call's is: the item's (its answer was unusable, or its
#: request refused, e.g. too long), the moment's (retry later) or the run's.
ANSWER, TRANSIENT, RUN = "answer", "transient", "run"


def llm_model_check(project: Project, model: str) -> None:
    """Refuse a run the project cannot make: no endpoint, or another model.

    Raises:
        ApplicationError: naming what is missing or refused.
    """
    if not project.llm_base_url:
        raise ApplicationError(
            f"project {project.name!r} has no LLM configured (llm_base_url)"
        )
    if not model:
        raise ApplicationError("model is required")
    if project.llm_models and model not in project.llm_models:
        raise ApplicationError(
            f"model {model!r} is not one of the project's models {project.llm_models}"
        )


def llm_failure_kind(error: BaseException | None) -> str:
    """ANSWER, TRANSIENT or RUN for ``error``, raised by a call of
    :mod:`pipeline.llm`."""

    # An LLMError raised *from* the SDK's exception failed at the HTTP level;
    # one on its own is an unusable answer (a refusal, no choices).
    if not isinstance(error, LLMError) or error.__cause__ is None:
        return ANSWER
    if error.transient:
        return TRANSIENT
    if error.status_code in (401, 403, 404):
        return RUN  # wrong key, unknown model: every item would fail
    return ANSWER  # e.g. a 400 for a prompt too long: this item's


@overload
def run_prices(
    models: str | Iterable[str], *, required: Literal[True] = ...
) -> Prices: ...
@overload
def run_prices(models: str | Iterable[str], *, required: bool) -> Prices | None: ...
def run_prices(models: str | Iterable[str], *, required: bool = True) -> Prices | None:
    """The deployment's (prompt, completion) prices per million tokens for a
    run calling ``models`` (settings.LLM_PRICES; ``*`` prices any model it
    does not name); None when one has none and they are not ``required``
    (an estimate without a cost). A run calling several books every call at
    the dearest of their prices: a deliberate approximation, on the side of
    the budget.

    Raises:
        ApplicationError: a model has no price and they are ``required``: a
            budget in money cannot be kept without one.
    """
    table = settings.LLM_PRICES
    found = []
    for model in [models] if isinstance(models, str) else models:
        prices = table.get(model, table.get("*"))
        if prices is None:
            if not required:
                return None
            raise ApplicationError(
                f"model {model!r} has no price in the deployment's LLM_PRICES; "
                "ask its administrator to set one"
            )
        found.append(prices)
    return max(p[0] for p in found), max(p[1] for p in found)


def integer_param(
    params: dict[str, Any], key: str, default: int, *, low: int, high=None
) -> int:
    """``params[key]`` (``default`` when absent), an integer in [low, high].

    Raises:
        ApplicationError: naming the param and its bounds.
    """
    value = params.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ApplicationError(f"params.{key} must be an integer, got {value!r}")
    if value < low or (high is not None and value > high):
        top = f" and at most {high}" if high is not None else ""
        raise ApplicationError(f"params.{key} must be at least {low}{top}")
    return value


def _number_param(params: dict[str, Any], key: str, *, low, high, above_low=False):
    value = params[key]
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
    ):
        raise ApplicationError(f"params.{key} must be a number, got {value!r}")
    if value < low or (above_low and value == low) or value > high:
        low_text = f"more than {low}" if above_low else f"at least {low}"
        raise ApplicationError(f"params.{key} must be {low_text} and at most {high}")


#: Every LLM setting a run may name, checked against the deployment's bounds
#: when the run starts (a run's starter picks within them, never past them).
LLM_SETTINGS = (
    "temperature",
    "top_p",
    "timeout",
    "max_retries",
    "n",
    "max_tokens",
    "max_concurrency",
    "seed",
    "json_mode",
)
#: Those of a run whose calls go through one client (extraction, grading):
#: all but the call ledger's concurrency.
CLIENT_SETTINGS = tuple(key for key in LLM_SETTINGS if key != "max_concurrency")
_JSON_MODES = ("json_schema", "json_object", "none")


def llm_params_check(
    params: Any, *, settings_known: Collection[str], options: Collection[str] = ()
) -> None:
    """Refuse a run's ``params`` naming a price (the deployment sets them), a
    key outside ``settings_known`` (LLM settings) and ``options`` (the job's
    own, checked by the job), or an LLM setting outside its bounds.

    Raises:
        ApplicationError: naming the param and the bound.
    """
    if not isinstance(params, dict):
        raise ApplicationError("params must be an object")
    priced = [key for key in PRICE_KEYS if key in params]
    if priced:
        raise ApplicationError(
            f"params.{priced[0]}: prices are set by the deployment (LLM_PRICES), "
            "not by a run; leave them out"
        )
    known = [*options, *settings_known]
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise ApplicationError(f"unknown params {unknown}; known: {known}")
    bounds = {
        "max_retries": (0, settings.LLM_RUN_MAX_RETRIES),
        "n": (1, settings.LLM_RUN_MAX_N),
        "max_tokens": (1, settings.LLM_RUN_MAX_TOKENS),
        "max_concurrency": (1, settings.LLM_RUN_MAX_CONCURRENCY),
        "seed": (0, 2**63 - 1),
    }
    for key, value in params.items():
        # A null temperature leaves it to the server (reasoning models
        # refuse one); no other setting has a null meaning.
        if key in options or (key == "temperature" and value is None):
            continue
        if key in bounds:
            integer_param(params, key, 0, low=bounds[key][0], high=bounds[key][1])
        elif key == "timeout":
            _number_param(
                params,
                key,
                low=0,
                high=settings.LLM_RUN_MAX_TIMEOUT,
                above_low=True,
            )
        elif key == "temperature":
            _number_param(params, key, low=0, high=2)
        elif key == "top_p":
            _number_param(params, key, low=0, high=1)
        elif key == "json_mode" and value not in _JSON_MODES:
            raise ApplicationError(
                f"params.json_mode must be one of {list(_JSON_MODES)}, got {value!r}"
            )


def budget_from(value: Any) -> Decimal:
    """A run's budget as the money fields store it, within the deployment's
    LLM_RUN_MAX_BUDGET.

    Raises:
        ApplicationError: not a number, not more than 0 at the stored
            precision, or over the deployment's cap.
    """
    try:
        if isinstance(value, bool):
            raise TypeError
        budget = Decimal(str(value))
    except (InvalidOperation, TypeError, ValueError):
        raise ApplicationError(f"budget must be a number, got {value!r}") from None
    if not budget.is_finite() or budget.quantize(MICRO) <= 0:
        raise ApplicationError(f"budget must be more than 0, got {budget}")
    cap = min(Decimal(str(settings.LLM_RUN_MAX_BUDGET)), _MAX_BUDGET - MICRO)
    if budget > cap:
        raise ApplicationError(
            f"budget must be at most {cap} (the deployment's LLM_RUN_MAX_BUDGET)"
        )
    return budget.quantize(MICRO)


def cost(prices: Prices, prompt_tokens: int, completion_tokens: int) -> Decimal:
    """What the tokens cost at ``prices``."""
    total = prices[0] * prompt_tokens + prices[1] * completion_tokens
    return (total / Decimal(1_000_000)).quantize(MICRO)


def batch_estimate(
    run: Any,
    batch: Sequence,
    prices: Prices,
    *,
    tokens: Callable[[Sequence], tuple[int, int]],
) -> Decimal:
    """What the next ``batch`` of a run would cost: at ``prices`` for the
    (prompt, completion) tokens that ``tokens`` estimates from its prompts'
    length, or what the run has paid per item so far when that is more
    (repairs, long reasoning)."""
    estimate = cost(prices, *tokens(batch))
    if run.progress_done:
        estimate = max(estimate, run.cost / run.progress_done * len(batch))
    return estimate


def llm_config(run: LLMRun):
    """The LLM client's settings for ``run`` (any kind): the project's
    endpoint and key, checked against the deployment's allow-lists again,
    and the run's settings.

    Raises:
        ConfigurationError: the endpoint or key is refused or missing, or a
            setting is not one the client takes.
    """

    project = run.project
    # Rows written before the allow-lists, or the lists narrowed since: no
    # request leaves the server for an endpoint or key the deployment refuses.
    problem = allowlists.llm_settings_problem(
        project.llm_base_url, project.llm_api_key_env
    )
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
    for key in PRICE_KEYS:
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

"""What every LLM run shares besides its lifecycle (:mod:`annotator.runs`):
the check of the model it asks for, whose fault a failed call is, and its
money: prices from the run's params and costs in the money fields'
precision."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from .errors import ApplicationError
from .models import Project

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
    from pipeline.llm import LLMError

    # An LLMError raised *from* the SDK's exception failed at the HTTP level;
    # one on its own is an unusable answer (a refusal, no choices).
    if not isinstance(error, LLMError) or error.__cause__ is None:
        return ANSWER
    if error.transient:
        return TRANSIENT
    if error.status_code in (401, 403, 404):
        return RUN  # wrong key, unknown model: every item would fail
    return ANSWER  # e.g. a 400 for a prompt too long: this item's


def prices_from(params: Any, *, required: bool) -> Prices | None:
    """The (prompt, completion) prices per million tokens in a run's params;
    None when neither is given and they are not ``required``.

    Raises:
        ApplicationError: a price is not a number >= 0, or missing when required.
    """
    if not isinstance(params, dict):
        raise ApplicationError("params must be an object")
    given = [key for key in PRICE_KEYS if params.get(key) is not None]
    if not given:
        if required:
            raise ApplicationError(
                "a budget needs prices: set params.price_per_mtok_prompt and "
                "params.price_per_mtok_completion (0 for a free local model)"
            )
        return None
    prices = []
    for key in PRICE_KEYS:
        value = params.get(key, 0)
        try:
            if isinstance(value, bool):
                raise TypeError
            price = Decimal(str(value))
        except (InvalidOperation, TypeError, ValueError):
            raise ApplicationError(
                f"params.{key} must be a number, got {value!r}"
            ) from None
        if not price.is_finite() or price < 0:
            raise ApplicationError(f"params.{key} must be 0 or more, got {value!r}")
        prices.append(price)
    return prices[0], prices[1]


def budget_from(value: Any) -> Decimal:
    """A run's budget as the money fields store it.

    Raises:
        ApplicationError: not a number, not more than 0 at the stored
            precision, or too large to store.
    """
    try:
        budget = Decimal(str(value))
    except (InvalidOperation, ValueError):
        raise ApplicationError(f"budget must be a number, got {value!r}") from None
    if not budget.is_finite() or budget.quantize(MICRO) <= 0:
        raise ApplicationError(f"budget must be more than 0, got {budget}")
    if budget >= _MAX_BUDGET:
        raise ApplicationError(f"budget must be less than {_MAX_BUDGET}")
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

"""The one door every LLM call of a run goes through.

A call waits for a slot at its endpoint (``max_concurrency`` of the models
served there), is priced before it is sent and refused if it could take the
run past its budget, and its tokens and cost are booked once answered. The
openai SDK itself retries 429 and 5xx with backoff (:mod:`pipeline.llm`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Executor
from typing import Any, TypeVar

from ...errors import PipelineError
from ...llm import Client, LLMError, Usage, chat_text, make_client
from .models import ModelSpec, ModelSpecError

T = TypeVar("T")

#: The completion a call is priced at beforehand when its spec sets no
#: ``max_tokens``: generous for a judge's verdict, short of a long sample.
DEFAULT_COMPLETION_TOKENS = 1024
#: Prompt tokens are estimated from characters before a call is sent.
CHARS_PER_TOKEN = 4


class BudgetExceeded(PipelineError):
    """The next call could take the run past its budget, so it was not sent;
    every later call of the run is refused too."""


def cost_usd(
    spec: ModelSpec, prompt_tokens: float, completion_tokens: float
) -> float | None:
    """What the tokens cost at ``spec``'s prices; ``None`` when it has none."""
    prompt_price = spec.price_per_mtok_prompt
    completion_price = spec.price_per_mtok_completion
    if prompt_price is None or completion_price is None:  # not spec.priced
        return None
    return (
        prompt_price * prompt_tokens + completion_price * completion_tokens
    ) / 1_000_000


class Tally:
    """Tokens, requests and cost per model name; safe to share across threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._usage: dict[str, Usage] = {}
        self._cost: dict[str, float | None] = {}

    def add(self, spec: ModelSpec, usage: Usage) -> None:
        cost = cost_usd(spec, usage.prompt_tokens, usage.completion_tokens)
        with self._lock:
            name = spec.model
            self._usage[name] = self._usage.get(name, Usage()) + usage
            known = self._cost.get(name, 0.0)
            # One call at an unknown price makes the model's cost unknown.
            self._cost[name] = None if known is None or cost is None else known + cost

    @property
    def cost_usd(self) -> float | None:
        """The total; ``None`` when some model used has no prices."""
        with self._lock:
            costs = list(self._cost.values())
        known = [cost for cost in costs if cost is not None]
        return None if len(known) < len(costs) else sum(known)

    def usage(self, model: str) -> Usage:
        with self._lock:
            return self._usage.get(model, Usage())

    def to_json(self) -> dict[str, Any]:
        """``{"models": {name: tokens, requests, cost_usd}, "cost_usd": total}``."""
        with self._lock:
            models = {
                name: {
                    "prompt_tokens": u.prompt_tokens,
                    "completion_tokens": u.completion_tokens,
                    "requests": u.requests,
                    "cost_usd": _money(self._cost[name]),
                }
                for name, u in sorted(self._usage.items())
            }
        return {"models": models, "cost_usd": _money(self.cost_usd)}


def _money(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


class CallLedger:
    """Sends chat calls for a run's models within endpoint limits and budget.

    Args:
        models: every model the run may call. Models sharing a ``base_url``
            share one limit, the smallest ``max_concurrency`` among them.
        api_keys: keys by the name in each spec's ``api_key_env``; the
            caller reads them (the library reads no environment).
        budget_usd: refuse any call that could take the run's cost past
            this; ``None`` for no budget.
        timeout: seconds per HTTP request.
        max_retries: SDK retries of 429 / 5xx / timeouts, with backoff.
        completion_tokens: the completion a call is priced at beforehand
            when its spec sets no ``max_tokens``.

    Attributes:
        tally: what the run has spent, per model.
        stopped: why calls are refused (the budget), or ``None``.

    Raises:
        ModelSpecError: a key named by ``api_key_env`` is not in
            ``api_keys``, or a budget is set and a model has no prices.
    """

    def __init__(
        self,
        models: Iterable[ModelSpec],
        *,
        api_keys: Mapping[str, str] | None = None,
        budget_usd: float | None = None,
        timeout: float = 120.0,
        max_retries: int = 3,
        completion_tokens: int = DEFAULT_COMPLETION_TOKENS,
    ):
        models = list(dict.fromkeys(models))
        api_keys = api_keys or {}
        if budget_usd is not None:
            if budget_usd < 0:
                raise ModelSpecError("the budget must be 0 or more")
            unpriced = sorted({m.model for m in models if not m.priced})
            if unpriced:
                raise ModelSpecError(
                    f"a budget needs prices: set price_per_mtok_prompt and "
                    f"price_per_mtok_completion of {unpriced} (0 for a free model)"
                )
        self.budget_usd = budget_usd
        self.completion_tokens = completion_tokens
        self.tally = Tally()
        self.stopped: str | None = None
        self._lock = threading.Lock()
        self._reserved = 0.0
        self._configs = {}
        clients: dict[tuple[str, str | None], Client] = {}
        limits: dict[str, int] = {}
        for spec in models:
            if spec.api_key_env and spec.api_key_env not in api_keys:
                raise ModelSpecError(
                    f"model {spec.model!r} needs the key in {spec.api_key_env}, "
                    "which was not given"
                )
            key = api_keys.get(spec.api_key_env) if spec.api_key_env else None
            config = spec.llm_config(key, timeout=timeout, max_retries=max_retries)
            where = (spec.base_url, key)
            if where not in clients:
                clients[where] = make_client(config)
            self._configs[spec] = (clients[where], config)
            limits[spec.base_url] = min(
                limits.get(spec.base_url, spec.max_concurrency), spec.max_concurrency
            )
        self._slots = {url: threading.Semaphore(n) for url, n in limits.items()}
        #: Requests the run may have in flight across all endpoints.
        self.slots = sum(limits.values())

    def knows(self, spec: ModelSpec) -> bool:
        """Whether ``spec`` is one of the ledger's models."""
        return spec in self._configs

    def chat(self, spec: ModelSpec, prompt: str, *, tally: Tally | None = None) -> str:
        """Send ``prompt`` as one user message to ``spec``'s model.

        Args:
            spec: one of the ledger's models.
            prompt: the whole request.
            tally: books the call's usage here too (an item's own account).

        Returns:
            The answer's text.

        Raises:
            BudgetExceeded: the call could pass the budget (not sent).
            LLMError: the server failed after the SDK's retries.
            ModelSpecError: ``spec`` is not one of the ledger's models.
        """
        if spec not in self._configs:
            raise ModelSpecError(f"model {spec.model!r} was not given to the ledger")
        client, config = self._configs[spec]
        messages = [{"role": "user", "content": prompt}]
        with self._slots[spec.base_url]:
            estimate = self._reserve(spec, len(prompt))
            try:
                text, usage = chat_text(client, config, messages)
            except LLMError as e:
                self._settle(spec, estimate, e.usage, tally)
                raise
            self._settle(spec, estimate, usage, tally)
        return text

    def estimate_usd(self, spec: ModelSpec, prompt_chars: int) -> float:
        """The most a call is taken to cost before it is sent: prompt
        characters / 4 tokens, and ``max_tokens`` (else
        ``completion_tokens``) of completion."""
        completion = spec.max_tokens or self.completion_tokens
        return cost_usd(spec, prompt_chars / CHARS_PER_TOKEN, completion) or 0.0

    def _reserve(self, spec: ModelSpec, prompt_chars: int) -> float:
        if self.budget_usd is None:
            return 0.0
        estimate = self.estimate_usd(spec, prompt_chars)
        with self._lock:
            if self.stopped is None:
                spent = self.tally.cost_usd or 0.0
                if spent + self._reserved + estimate > self.budget_usd:
                    self.stopped = (
                        f"budget of ${self.budget_usd:g} reached: ${spent:.6f} "
                        f"spent, ${self._reserved:.6f} in flight, and a call to "
                        f"{spec.model!r} could cost ${estimate:.6f} more"
                    )
            if self.stopped is not None:
                raise BudgetExceeded(self.stopped)
            self._reserved += estimate
        return estimate

    def _settle(
        self, spec: ModelSpec, estimate: float, usage: Usage, tally: Tally | None
    ) -> None:
        with self._lock:
            self._reserved -= estimate
            self.tally.add(spec, usage)
        if tally is not None:
            tally.add(spec, usage)


def gather(pool: Executor, tasks: Sequence[Callable[[], T]]) -> list[T]:
    """Run ``tasks`` on ``pool``; their results in order.

    On the first failure the tasks not yet started are cancelled and the
    error raised, so a failed item sends no more calls.
    """
    futures = [pool.submit(task) for task in tasks]
    try:
        return [f.result() for f in futures]
    except BaseException:
        for f in futures:
            f.cancel()
        raise

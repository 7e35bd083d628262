"""What a consistency run's job is (sampling, corrections), and the pieces
every job shares: token estimates and the models it may call."""

from __future__ import annotations

import math
from collections.abc import Collection
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any, Protocol

from annotator.core.errors import ApplicationError
from annotator.models import Document, Project
from annotator.runs.budgets import llm_model_check

#: Approximate characters per token, for estimates only (runs count real
#: usage, and the call ledger refuses any call that could pass the budget);
#: ~3 tokens of framing per message plus ~3 to prime the reply.
CHARS_PER_TOKEN = 4
TOKENS_PER_CALL = 3 + 3


def tokens(chars: int) -> int:
    """Estimated tokens of ``chars`` characters of text."""
    return math.ceil(chars / CHARS_PER_TOKEN)


@dataclass(frozen=True)
class Calls:
    """What one answer would cost a job: calls by kind, and tokens."""

    by_kind: dict[str, int]
    prompt_tokens: int
    completion_tokens: int


class Job(Protocol):
    """One kind of consistency run. A unit of work is an answer (a
    document) with what the job needs of it (``data``), found by ``todo``."""

    #: ``ConsistencyRun.job``.
    name: str
    #: What the run's messages call it ("sampling").
    noun: str
    #: The answers still to do, for messages ("answers left without samples").
    left: str
    #: The params of the job besides prices and LLM settings.
    option_keys: tuple[str, ...]
    #: The kinds of call an estimate counts.
    call_kinds: tuple[str, ...]

    def options(self, project: Project, params: dict[str, Any]) -> dict[str, Any]:
        """The job's params checked (ApplicationError naming a bad one),
        defaults filled in."""

    def models(self, options: dict[str, Any]) -> list[str]:
        """Every model the run calls; the first is the run's ``model``."""

    def todo(
        self, project: Project, ids: Collection[int] | None = None
    ) -> list[tuple[Document, Any]]:
        """The answers to do (of ``ids`` only, when given), in id order."""

    def estimate(self, document: Document, data: Any, options: dict) -> Calls:
        """The calls one answer would take."""

    def work(
        self,
        document: Document,
        data: Any,
        *,
        specs: dict[str, Any],
        ledger: Any,
        pool: Executor,
        options: dict[str, Any],
    ) -> tuple[Any, list[str]]:
        """The answer's result and notes on what was unusable; raises the
        library's PipelineError (BudgetExceeded, LLMError) when a call fails."""

    def store(self, row: Document, document: Document, data: Any, result: Any) -> bool:
        """Put ``result`` into ``row`` (the answer, locked, as it is now);
        False when it answers something no longer there."""


def model_param(project: Project, params: dict[str, Any], key: str, default=None):
    """``params[key]``, a model the project allows (``default`` when absent).

    Raises:
        ApplicationError: not a model name, or one the project refuses.
    """
    model = params.get(key) or default
    if not isinstance(model, str) or not model:
        raise ApplicationError(f"params.{key} must be a model name")
    llm_model_check(project, model)
    return model

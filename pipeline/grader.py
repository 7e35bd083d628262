"""The LLM grader l(y, c): does the evidence support the claim? (paper 3.3.2)

A scorer like :class:`pipeline.score.NLIScorer`: ``name``, ``threshold`` and
``score_pairs(pairs)`` over ``(premise, hypothesis)`` pairs, asking the
question of the claims' kind (:mod:`pipeline.grader_prompts`; for extracted
fields the premise is the aligned context and the hypothesis h(y), e.g.
``"Hearing Date: 2012-01-17"``). The model writes its reasoning first, then a
strict label, SUPPORTS (score 1.0) or INSUFFICIENT (0.0).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal

from .errors import ScorerError
from .grader_prompts import SUPPORT_PROMPT, GraderPrompt
from .llm import Client, LLMConfig, LLMError, Usage, chat_json, make_client

GradeLabel = Literal["SUPPORTS", "INSUFFICIENT"]

GRADE_SCHEMA = {
    "type": "object",
    # Reasoning comes first so the model thinks before it commits to a label.
    "properties": {
        "reasoning": {"type": "string"},
        "label": {"type": "string", "enum": ["SUPPORTS", "INSUFFICIENT"]},
    },
    "required": ["reasoning", "label"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class Grade:
    label: GradeLabel
    reasoning: str
    score: float
    usage: Usage


#: A grade at or above this is the grader's "supports" (grades are 0 or 1).
THRESHOLD = 0.5


class LLMGrader:
    """Scores ``(premise, hypothesis)`` pairs with an LLM's SUPPORTS verdict.

    Args:
        config: the grading model and request settings.
        prompt: what the claims' kind asks (its checker's ``grader_prompt``).
        client: an existing client; one is made from ``config`` otherwise.
        concurrency: requests in flight at once in :meth:`score_pairs`.

    Attributes:
        name: ``"llm:{model}"``.
        version: a hash of the system prompt, recorded with every score.
        threshold: 0.5; scores are 0.0 or 1.0.
        usage: everything this grader has spent so far.
    """

    threshold = THRESHOLD

    def __init__(
        self,
        config: LLMConfig,
        *,
        prompt: GraderPrompt = SUPPORT_PROMPT,
        client: Client | None = None,
        concurrency: int = 4,
    ):
        self.config = config
        self.prompt = prompt
        self.client = client if client is not None else make_client(config)
        self.concurrency = concurrency
        self.name = f"llm:{config.model}"
        self.version = hashlib.sha256(prompt.system.encode()).hexdigest()[:12]
        self.usage = Usage()
        self._lock = threading.Lock()

    def grade(self, premise: str, hypothesis: str) -> Grade:
        """Grade one pair.

        Raises:
            ScorerError: the server failed or the answer was unusable after
                the repair attempt.
        """
        messages = [
            {"role": "system", "content": self.prompt.system},
            {"role": "user", "content": self.prompt.message(premise, hypothesis)},
        ]
        try:
            answer, usage = chat_json(
                self.client, self.config, messages, GRADE_SCHEMA, name="grade"
            )
        except LLMError as e:
            self._spend(e.usage)
            raise ScorerError(f"LLM grader: {e}") from e
        self._spend(usage)
        label = answer["label"]
        return Grade(
            label=label,
            reasoning=answer["reasoning"],
            score=1.0 if label == "SUPPORTS" else 0.0,
            usage=usage,
        )

    def _spend(self, usage: Usage) -> None:
        with self._lock:
            self.usage += usage

    def score_pairs(
        self,
        pairs: Sequence[tuple[str, str]],
        *,
        batch_size: int | None = None,
        progress: bool = False,
    ) -> list[float]:
        """p(supports) (0.0 or 1.0) for each ``(premise, hypothesis)``, in order.

        Args:
            pairs: ``(aligned context, h(y))`` pairs.
            batch_size: requests in flight at once (default: ``concurrency``).
            progress: show a tqdm bar.

        Raises:
            ScorerError: any pair could not be graded.
        """
        if not pairs:
            return []
        workers = max(1, batch_size or self.concurrency)
        pool = ThreadPoolExecutor(max_workers=workers)
        try:
            grades = pool.map(lambda pair: self.grade(*pair), pairs)
            if progress:
                from tqdm import tqdm

                grades = tqdm(grades, total=len(pairs), desc="grading", unit="pair")
            return [grade.score for grade in grades]
        finally:
            # On the first failure, pairs not yet sent are not sent at all.
            pool.shutdown(wait=True, cancel_futures=True)

"""The LLM grader l(y, c): does the context support the entity? (paper 3.3.2)

A scorer like :class:`pipeline.score.NLIScorer`: ``name``, ``threshold`` and
``score_pairs(pairs)`` over ``(premise, hypothesis)`` pairs, where the premise
is the aligned context and the hypothesis is h(y), e.g. ``"Hearing Date:
2012-01-17"``. The model writes its reasoning first, then a strict label,
SUPPORTS (score 1.0) or INSUFFICIENT (0.0).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal

from .errors import ScorerError
from .llm import Client, LLMConfig, LLMError, Usage, chat_json, make_client

GradeLabel = Literal["SUPPORTS", "INSUFFICIENT"]

# Appendix B. The paper's examples answer "(return true/false)" for "is a
# hallucination" and the prompt breaks off after them; here the examples
# answer in the output format asked for, and the instructions and output
# format that follow are ours. The pair to grade goes in the user message.
GRADER_PROMPT = """\
<task>
Name: Hallucination Detection
Description: Given an extracted context and an entity, determine if the entity
is of the correct type and if the context supports the entity.
</task>

<examples>
<example>
<extracted_entity>Date: 2025-06-14</extracted_entity>
<context>he said they would show up on jun 14, 25</context>
<output>{"reasoning": "This would not be a hallucination: jun 14, 25 is \
2025-06-14.", "label": "SUPPORTS"}</output>
</example>
<example>
<extracted_entity>Judge: Joe Burrow</extracted_entity>
<context>the claimant joe burrow</context>
<output>{"reasoning": "This would be a hallucination, as the context informs \
us that the extracted entity is a claimant and not a judge.", \
"label": "INSUFFICIENT"}</output>
</example>
<example>
<extracted_entity>Hearing Type: In Person</extracted_entity>
<context></context>
<output>{"reasoning": "This would be a hallucination as there is no context \
provided.", "label": "INSUFFICIENT"}</output>
</example>
</examples>

<instructions>
- The extracted entity is written as "Entity Type: value".
- Answer SUPPORTS only if the context states the value (allowing for
  normalization such as date formats or capitalization) and shows that it is
  of the stated entity type.
- Answer INSUFFICIENT if the context is empty, gives a different value, gives
  the value in another role or type, or does not say enough to tell.
- Judge from the context alone, not from outside knowledge.
</instructions>

<output_format>
Return a JSON object with "reasoning" (one to three sentences) followed by
"label", which is exactly SUPPORTS or INSUFFICIENT. Output nothing else.
</output_format>
"""

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


def grader_message(premise: str, hypothesis: str) -> str:
    """The user message holding one pair, in the examples' markup."""
    return (
        f"<extracted_entity>{hypothesis}</extracted_entity>\n"
        f"<context>{premise}</context>"
    )


#: A grade at or above this is the grader's "supports" (grades are 0 or 1).
THRESHOLD = 0.5


class LLMGrader:
    """Scores ``(premise, hypothesis)`` pairs with an LLM's SUPPORTS verdict.

    Args:
        config: the grading model and request settings.
        client: an existing client; one is made from ``config`` otherwise.
        concurrency: requests in flight at once in :meth:`score_pairs`.

    Attributes:
        name: ``"llm:{model}"``.
        version: a hash of the prompt, recorded with every score.
        threshold: 0.5; scores are 0.0 or 1.0.
        usage: everything this grader has spent so far.
    """

    threshold = THRESHOLD

    def __init__(
        self, config: LLMConfig, *, client: Client | None = None, concurrency: int = 4
    ):
        self.config = config
        self.client = client if client is not None else make_client(config)
        self.concurrency = concurrency
        self.name = f"llm:{config.model}"
        self.version = hashlib.sha256(GRADER_PROMPT.encode()).hexdigest()[:12]
        self.usage = Usage()
        self._lock = threading.Lock()

    def grade(self, premise: str, hypothesis: str) -> Grade:
        """Grade one pair.

        Raises:
            ScorerError: the server failed or the answer was unusable after
                the repair attempt.
        """
        messages = [
            {"role": "system", "content": GRADER_PROMPT},
            {"role": "user", "content": grader_message(premise, hypothesis)},
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

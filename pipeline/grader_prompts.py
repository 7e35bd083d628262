"""What the LLM grader is asked: each kind of claim's prompt, and the
answer every prompt asks for. Apart from :mod:`pipeline.grader` so that a
checker names its prompt without loading the LLM client."""

from __future__ import annotations

from dataclasses import dataclass

#: The answer every grading prompt asks for (pipeline.grader.GRADE_SCHEMA).
OUTPUT_FORMAT = """\
<output_format>
Return a JSON object with "reasoning" (one to three sentences) followed by
"label", which is exactly SUPPORTS or INSUFFICIENT. Output nothing else.
</output_format>
"""


@dataclass(frozen=True)
class GraderPrompt:
    """What a kind of claim asks the grader: the system prompt, and the
    tags the user message wraps the claim and its evidence in."""

    system: str
    claim_tag: str = "claim"
    evidence_tag: str = "evidence"

    def message(self, premise: str, hypothesis: str) -> str:
        """The user message holding one pair, in the prompt's markup."""
        return (
            f"<{self.claim_tag}>{hypothesis}</{self.claim_tag}>\n"
            f"<{self.evidence_tag}>{premise}</{self.evidence_tag}>"
        )


#: For a claim read against the passages that should state it (an answer
#: sentence against its sources, a brief's proposition against the opinion):
#: the kinds whose checker names no prompt of its own.
SUPPORT_PROMPT = GraderPrompt(
    """\
<task>
Name: Claim Verification
Description: Given a claim and the evidence it should rest on, determine
whether the evidence supports the claim.
</task>

<instructions>
- Answer SUPPORTS only if the evidence states the claim or plainly entails it
  (allowing for paraphrase and normalization such as date formats).
- Answer INSUFFICIENT if the evidence is empty, contradicts the claim, says
  something else, or does not say enough to tell.
- Judge from the evidence alone, not from outside knowledge.
</instructions>

"""
    + OUTPUT_FORMAT
)

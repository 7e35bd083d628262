"""The grader's prompt for extracted fields (paper 3.3.2, Appendix B): does
the context support the entity, in the stated type?"""

from __future__ import annotations

from ...grader_prompts import OUTPUT_FORMAT, GraderPrompt

# Appendix B. The paper's examples answer "(return true/false)" for "is a
# hallucination" and the prompt breaks off after them; here the examples
# answer in the output format asked for, and the instructions and output
# format that follow are ours. The pair to grade goes in the user message.
GRADER_PROMPT = GraderPrompt(
    """\
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

"""
    + OUTPUT_FORMAT,
    claim_tag="extracted_entity",
    evidence_tag="context",
)

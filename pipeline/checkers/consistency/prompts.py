"""The prompts of FINCH-ZK (paper appendix A.2 and A.6) and their answer tags.

The templates are Figures 3 to 11 word for word, less what the PDF shows
around them: the code-box fences, the stray closing quote after the first
paragraph of Figures 3 and 6 and the line of four double quotes in Figure 11
(both left from the authors' Python string literals). Placeholders are ``{name}``;
:func:`render` fills them in one pass, so JSON braces in a template and
braces in the filled-in text are left alone. Blocks the paper repeats
("...") are built from :data:`CONFLICT` and :data:`CONTEXT`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ...errors import PipelineError

#: A.2 Zero-shot CoT: appended to the prompt.
COT_SUFFIX = "Let's think step by step."
#: A.2 Long Answer: put before the prompt.
LONG_ANSWER_PREFIX = (
    "Provide an answer with at least a 1000 words to the following prompt:"
)

# Figure 3.
REPHRASE = """\
Given a prompt, rephrase this prompt into an equivalent prompt to help in \
doing better answering. Maintain all information from the original prompt.

Here is the original prompt (inside <original> </original> tag):

<original>
{original}
</original>

Again, note that the new prompt should be equivalent to the original prompt. \
Provide the new prompt inside <new> </new> tags."""

# Figure 4.
EXPAND_BEFORE = """\
I need you to add sentences at the beginning of a given prompt. Note that you \
do not need to follow the instructions in the prompt. You are required to \
provide three sentences that can be added at the beginning of the prompt to \
help in doing better answering.

Here is the given prompt (inside <prompt> </prompt> tag):

<prompt>
{original}
</prompt>

Provide the sentences to be added at the beginning of the prompt inside \
<answer> </answer> tags."""

# Figure 5.
EXPAND_AFTER = """\
I need you to add sentences at the end of a given prompt. Note that you do not \
need to follow the instructions in the prompt. You are required to provide \
three sentences that can be added at the end of the prompt to help in doing \
better answering.

Here is the given prompt (inside <prompt> </prompt> tag):

<prompt>
{original}
</prompt>

Provide the sentences to be added at the end of the prompt inside <answer> \
</answer> tags."""

# Figure 6.
BREAK_DOWN = """\
Given a prompt, break down this prompt into multiple sub-prompts to help in \
doing better answering. Maintain all information from the original prompt.

Here is the original prompt (inside <original> </original> tag):

<original>
{original}
</original>

Again, note that the multiple sub-prompts together should be equivalent to \
the original prompt. List the multiple sub-prompts inside <sub-prompts> \
</sub-prompts> tags (one sub-prompt per line)."""

_RULES = """\
1. Your answer should be "no" if the passage contains a direct factual \
contradiction when compared against the reference.
2. Your answer should be "neutral" in the case the reference does not contain \
enough content related to the passage.
3. Otherwise, your answer should be "yes"."""

# Figure 7: one block against one sample.
JUDGE = (
    """\
I have a passage that is part of the response from a language model for \
answering a prompt. Please help me in fact-checking whether the passage is \
correct with respect to the provided reference.

Prompt (inside <prompt> </prompt> tags)

<prompt>
{prompt}
</prompt>

Full Response (inside <full-response> </full-response> tags)

<full-response>
{full_response}
</full-response>

Reference (inside <reference> </reference> tags)

<reference>
{reference}
</reference>

Passage (part of the full response, to be checked with respect to the \
reference) (inside <passage> </passage> tags)

<passage>
{passage}
</passage>

Does the passage complies with the reference? Your answer should be "yes", \
"no", or "neutral".

Rules:

"""
    + _RULES
    + """

Provide a brief explanation in less than 30 words in <explain> </explain> \
tags. Then respond with your answer in <answer> </answer> tags (subject to the \
rules)."""
)

# Figure 8: every block against one sample; {passages} is the JSON list.
BATCH_JUDGE = (
    """\
I have a prompt and a list of passages. All passages can be concatenated to \
form a complete answer to the prompt. Please help me in fact-checking whether \
these passages are correct with respect to the provided reference.

Prompt (inside <prompt> </prompt> tags)

<prompt>
{prompt}
</prompt>

Reference (inside <reference> </reference> tags)

<reference>
{reference}
</reference>

Passages (inside <passages> </passages> tags, represented as a JSON list as \
[{"id": <passage-id>, "text": <passage-text>}, ...])

<passages>
{passages}
</passages>

For each passage, check whether the passage complies with the reference? Your \
answer should be "yes", "no", or "neutral", one each per passage.

Rules:

"""
    + _RULES
    + """

Include the answer (as "answer" field) and a brief explanation in less than \
30 words (as "explanation" field) in your output.

Do not include "explanation" field for passages with answer as "yes" in your \
output.

Format your final output as a valid JSON list [{"id": <passage-id>, "answer": \
<answer>, "explanation": <explanation>}, ...] using JSON best practices (like \
escaping double quotes in strings with a backslash) surrounded inside <output> \
</output> tags."""
)

#: One conflict of Figures 9 and 10: a judgement's label and explanation.
CONFLICT = """\
<conflict>
SEVERITY: {label}
{explanation}
</conflict>"""

# Figure 9; {conflicts} is one CONFLICT per judgement, a blank line apart.
SUMMARIZE = """\
I need you to summarize possible inaccuracies in a passage. I will give you \
the passage and a list of possible major/minor conflicts that might be due to \
inaccuracies in the passage. You are required to identify consistent/recurring \
conflicts, and summarize them compactly as a helpful comment highlighting the \
possible inaccuracies in the passage.

Here is the passage (inside <passage> </passage> tag):

<passage>
{passage}
</passage>

Here are the possible conflicts (inside <conflict> </conflict> tags):

{conflicts}

Provide your answer as a brief summary (in less than 30 words and inside \
<summary> </summary> tag)."""

# Figure 10.
CORRECT = """\
I need you to correct possible inaccuracies in a passage. I will give you the \
passage, a summary of the possible inaccuracies, and a detailed list of \
possible major/minor conflicts that might be due to inaccuracies in the \
passage. You are required to identify consistent/recurring conflicts, and \
generate a corrected version that removes all possible inaccuracies and \
conflicts in the passage.

Here is the passage (inside <passage> </passage> tag):

<passage>
{passage}
</passage>

Here is the summary of possible inaccuracies (inside <summary> </summary> \
tag):

<summary>
{summary}
</summary>

Here are the possible conflicts (inside <conflict> </conflict> tags):

{conflicts}

Provide the corrected passage inside <corrected> </corrected> tag."""

#: One context of Figure 11: a sample, numbered from 1.
CONTEXT = """\
<context>
Context {i}:
{sample}
</context>"""

# Figure 11; {contexts} is one CONTEXT per sample, a blank line apart.
REFLECT = """\
I have a response from a language model for answering a prompt. I need you to \
correct possible inaccuracies or incompleteness in the response. I will give \
you the response (along with the prompt), and a detailed list of different \
contexts that might be useful to find inaccuracies or incompleteness in the \
response. You are required to identify consistent/recurring differences, and \
generate an improved version that better captures the details required in the \
response.

Prompt (inside <prompt> </prompt> tags)

<prompt>
{prompt}
</prompt>

Response (inside <response> </response> tags)

<response>
{response}
</response>

Here are the different contexts (inside <context> </context> tags):

{contexts}

Provide a brief explanation of the changes in less than 100 words in <explain> \
</explain> tags. Then respond with your answer in <improved> </improved> tags."""


class UnusableAnswer(PipelineError):
    """An answer lacks the tag its prompt asked for (or never closes it), or
    holds nothing usable in it."""


def render(template: str, **fields: str) -> str:
    """``template`` with each ``{name}`` of ``fields`` replaced, in one pass.

    Other braces, and braces inside the values, are left as they are.
    """
    if not fields:
        return template
    names = "|".join(re.escape(name) for name in fields)
    return re.sub(r"\{(" + names + r")\}", lambda m: fields[m.group(1)], template)


def conflicts_text(conflicts: Iterable[tuple[str, str]]) -> str:
    """:data:`CONFLICT` for each ``(label, explanation)``, a blank line apart."""
    return "\n\n".join(
        render(CONFLICT, label=label, explanation=explanation)
        for label, explanation in conflicts
    )


def contexts_text(samples: Iterable[str]) -> str:
    """:data:`CONTEXT` for each sample, numbered from 1, a blank line apart."""
    return "\n\n".join(
        render(CONTEXT, i=str(i), sample=sample)
        for i, sample in enumerate(samples, start=1)
    )


def tag_text(answer: str, tag: str) -> str:
    """The text inside the last ``<tag>...</tag>`` of ``answer``, stripped.

    Case and white space inside the brackets are ignored. The last pair is
    taken because models sometimes quote the instructions ("in <answer>
    </answer> tags") before answering.

    Raises:
        UnusableAnswer: no complete pair of the tag.
    """
    name = re.escape(tag)
    pattern = rf"<\s*{name}\s*>(.*?)<\s*/\s*{name}\s*>"
    found = re.findall(pattern, answer, flags=re.IGNORECASE | re.DOTALL)
    if not found:
        raise UnusableAnswer(f"no <{tag}> </{tag}> in the answer")
    return found[-1].strip()


@dataclass(frozen=True)
class Prompts:
    """The templates a run uses; the paper's unless the caller swaps one.

    A replacement keeps the placeholders of the template it replaces.
    """

    rephrase: str = REPHRASE
    expand_before: str = EXPAND_BEFORE
    expand_after: str = EXPAND_AFTER
    break_down: str = BREAK_DOWN
    judge: str = JUDGE
    batch_judge: str = BATCH_JUDGE
    summarize: str = SUMMARIZE
    correct: str = CORRECT
    reflect: str = REFLECT

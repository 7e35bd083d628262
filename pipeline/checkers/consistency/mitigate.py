"""Summaries of what is wrong with flagged blocks, and their correction
(paper 2.4 "Summarize Errors" and 2.5).

A flagged block (CONTRADICTION or NEUTRAL) gets an error summary from the
judge model (Figure 9), then a corrected text from the improver model given
the summary and the conflicting judgements (Figure 10). The corrected
response is the original with only those blocks replaced: everything else,
the white space between blocks included, is kept byte for byte. Cross-model
reflection (Figure 11) may then rewrite the whole response from the samples.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from concurrent.futures import Executor
from functools import partial

from .calls import CallLedger, Tally, gather
from .items import Block, Correction, Improvement, Item
from .models import ModelSpec
from .prompts import (
    Prompts,
    UnusableAnswer,
    conflicts_text,
    contexts_text,
    render,
    tag_text,
)

#: Block labels that are summarized and corrected.
FLAGGED = ("CONTRADICTION", "NEUTRAL")


def conflicts(block: Block) -> list[tuple[str, str]]:
    """``(severity, explanation)`` of each judgement that found a problem:
    CONTRADICTION the major conflicts, NEUTRAL the minor ones."""
    return [(j.label, j.evidence) for j in block.judgements if j.label in FLAGGED]


def rebuild(response: str, blocks: Sequence[Block]) -> str:
    """``response`` with each block that has a correction replaced by it."""
    out, at = [], 0
    for b in sorted(blocks, key=lambda b: b.start):
        if b.correction is not None:
            out += [response[at : b.start], b.correction]
            at = b.end
    out.append(response[at:])
    return "".join(out)


def summary_request(block: Block, prompts: Prompts) -> str:
    """What the summarizer is asked about ``block`` (Figure 9)."""
    found = conflicts_text(conflicts(block))
    return render(prompts.summarize, passage=block.text, conflicts=found)


def correction_request(block: Block, summary: str | None, prompts: Prompts) -> str:
    """What the improver is asked to correct ``block`` with (Figure 10)."""
    return render(
        prompts.correct,
        passage=block.text,
        summary=summary or "",
        conflicts=conflicts_text(conflicts(block)),
    )


def block_corrections(blocks: Sequence[Block]) -> list[Correction]:
    """The corrections :func:`mitigate_blocks` made, to keep with the item."""
    return [
        Correction(b.start, b.end, b.text, b.correction, b.summary)
        for b in blocks
        if b.correction is not None
    ]


def mitigate_blocks(
    blocks: Sequence[Block],
    *,
    summarizer: ModelSpec | None,
    improver: ModelSpec | None,
    ledger: CallLedger,
    pool: Executor,
    prompts: Prompts | None = None,
    tally: Tally | None = None,
) -> tuple[list[Block], list[str]]:
    """Summarize (with ``summarizer``) and correct (with ``improver``) each
    flagged block, the blocks in parallel on ``pool``.

    Returns:
        The blocks, flagged ones with ``summary`` and ``correction`` set
        where the answers were usable, and a note for each that was not
        (such a block keeps its text).

    Raises:
        BudgetExceeded, LLMError: a call was refused or failed.
    """
    prompts = prompts or Prompts()

    def mitigate(index: int, block: Block) -> tuple[Block, list[str]]:
        notes = []
        summary = correction = None
        if summarizer is not None:
            answer = ledger.chat(
                summarizer, summary_request(block, prompts), tally=tally
            )
            try:
                summary = tag_text(answer, "summary")
            except UnusableAnswer as e:
                notes.append(f"block {index}: unusable error summary ({e})")
        if improver is not None:
            answer = ledger.chat(
                improver, correction_request(block, summary, prompts), tally=tally
            )
            try:
                correction = tag_text(answer, "corrected") or None
            except UnusableAnswer as e:
                notes.append(f"block {index}: unusable correction ({e}); kept")
            else:
                if correction is None:
                    notes.append(f"block {index}: empty correction; kept")
        return dataclasses.replace(block, summary=summary, correction=correction), notes

    flagged = [i for i, b in enumerate(blocks) if b.label in FLAGGED]
    done = gather(pool, [partial(mitigate, i, blocks[i]) for i in flagged])
    out, notes = list(blocks), []
    for i, (block, block_notes) in zip(flagged, done, strict=True):
        out[i] = block
        notes += block_notes
    return out, notes


def reflect(
    item: Item,
    response: str,
    *,
    improver: ModelSpec,
    ledger: CallLedger,
    prompts: Prompts | None = None,
    tally: Tally | None = None,
) -> Improvement:
    """Cross-model reflection (Figure 11): ``response`` (the block-corrected
    one) rewritten by the improver with every sample of ``item`` as context.

    Raises:
        UnusableAnswer: no ``<improved>`` text in the answer.
        BudgetExceeded, LLMError: the call was refused or failed.
    """
    prompts = prompts or Prompts()
    answer = ledger.chat(
        improver,
        render(
            prompts.reflect,
            prompt=item.prompt,
            response=response,
            contexts=contexts_text(s.text for s in item.samples),
        ),
        tally=tally,
    )
    improved = tag_text(answer, "improved")
    if not improved:
        raise UnusableAnswer("<improved> is empty")
    try:
        explanation = tag_text(answer, "explain")
    except UnusableAnswer:
        explanation = None
    return Improvement(improved, explanation)

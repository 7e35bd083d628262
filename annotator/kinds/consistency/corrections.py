"""The corrections job of consistency runs: the improver corrects the
blocks the check flagged (contradicted or unverified).

FINCH-ZK corrects each block the samples contradict, or fail to confirm, one
by one: an error summary, then a corrected text from the summary and the
conflicting sample sentences, the accurate blocks left as they are (paper
2.4, 2.5; the library's ``mitigate_blocks``). Here the flagged blocks are
the check's unsafe and unverified verdicts; the run around it is
:mod:`.consistency_runs`'.
The corrections go into the document's metadata, so they outlive a re-check
(each holds while its block's text is there), and the labeling screen shows
each as a diff the expert accepts or rejects.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from django.db.models import Q

from annotator.claims.records import document_record
from annotator.core.errors import ApplicationError
from annotator.kinds.consistency.jobs import Calls, model_param, tokens
from annotator.models import Claim, Document, Project, Verdict
from pipeline.checkers.consistency.checker import UNVERIFIED, finding_block
from pipeline.checkers.consistency.items import correction_to_json, item_from_document
from pipeline.checkers.consistency.mitigate import (
    block_corrections,
    correction_request,
    mitigate_blocks,
    summary_request,
)
from pipeline.checkers.consistency.prompts import Prompts

# Deliberate approximations, for the estimate only: an error summary runs to
# about a short paragraph, a correction about as long as its block (with
# room for the tags around both).
SUMMARY_TOKENS = 80
CORRECTION_GROWTH = 1.5


def _corrected(document: Document) -> set[tuple[int, int, str]]:
    """(start, end, text) of each block with a correction that holds."""

    try:
        item = item_from_document(document_record(document))
    except ValueError:
        return set()  # the check reports the malformed metadata
    return {
        (c.start, c.end, c.text) for c in item.corrections if c.holds(document.text)
    }


class CorrectionsJob:
    """The improver corrects each flagged block without a correction."""

    name = "corrections"
    noun = "corrections"
    left = "answers left with flagged blocks to correct"
    option_keys: tuple[str, ...] = ("improver", "summarizer", "summaries")
    call_kinds: tuple[str, ...] = ("summary_calls", "correction_calls")

    def options(self, project: Project, params: dict[str, Any]) -> dict[str, Any]:
        """``improver`` (corrects), ``summaries`` (first summarize each
        block's errors; yes by default, as the paper) and ``summarizer``
        (writes them; the improver by default)."""
        improver = model_param(project, params, "improver")
        summaries = params.get("summaries", True)
        if not isinstance(summaries, bool):
            raise ApplicationError("params.summaries must be true or false")
        summarizer = (
            model_param(project, params, "summarizer", improver) if summaries else None
        )
        return {"improver": improver, "summarizer": summarizer, "summaries": summaries}

    def models(self, options: dict[str, Any]) -> list[str]:
        return [
            m for m in dict.fromkeys([options["improver"], options["summarizer"]]) if m
        ]

    def todo(self, project: Project, ids: Collection[int] | None = None):
        """Each answer with flagged blocks lacking a correction, and those
        blocks (the library's, judgements included, from the check's
        findings)."""

        # The paper's flagged blocks: contradicted (unsafe) and unverified
        # (the samples do not settle them) alike.
        flagged = Claim.objects.filter(
            Q(verdict=Verdict.UNSAFE) | Q(verdict=Verdict.UNSCORED, reason=UNVERIFIED),
            project=project,
        ).exclude(checked_at=None)
        if ids is not None:
            flagged = flagged.filter(document_id__in=ids)
        blocks: dict[int, list] = {}
        for p in flagged.only("document_id", "data", "details").order_by("id"):
            try:
                block = finding_block(p.data["sentence"], p.details)
            except ValueError:
                continue  # no offsets: not a finding of the check
            blocks.setdefault(p.document_id, []).append(block)
        out = []
        for document in Document.objects.filter(pk__in=blocks).order_by("pk"):
            done = _corrected(document)
            todo = [
                b for b in blocks[document.pk] if (b.start, b.end, b.text) not in done
            ]
            if todo:
                out.append((document, sorted(todo, key=lambda b: b.start)))
        return out

    def estimate(self, document: Document, blocks, options: dict) -> Calls:
        """A summary and a correction call per block, their prompts rendered
        as the library sends them."""

        prompts = Prompts()
        summaries = options["summarizer"] is not None
        prompt = completion = 0
        for block in blocks:
            if summaries:
                prompt += tokens(len(summary_request(block, prompts)))
                completion += SUMMARY_TOKENS
            summary = "x" * (SUMMARY_TOKENS * 4) if summaries else None
            prompt += tokens(len(correction_request(block, summary, prompts)))
            completion += tokens(int(CORRECTION_GROWTH * len(block.text)))
        return Calls(
            {
                "summary_calls": len(blocks) if summaries else 0,
                "correction_calls": len(blocks),
            },
            prompt,
            completion,
        )

    def work(self, document, blocks, *, specs, ledger, pool, options):
        summarizer = options["summarizer"]
        mitigated, notes = mitigate_blocks(
            blocks,
            summarizer=specs[summarizer] if summarizer else None,
            improver=specs[options["improver"]],
            ledger=ledger,
            pool=pool,
        )
        return block_corrections(mitigated), notes

    def store(self, row: Document, document: Document, blocks, result) -> bool:
        """The corrections beside those of the answer's other blocks, unless
        its text changed meanwhile (the blocks are no longer there)."""

        if row.text != document.text or not result:
            return False
        replaced = {(c.start, c.end) for c in result}
        kept = [
            c
            for c in row.metadata.get("corrections") or []
            if isinstance(c, dict) and (c.get("start"), c.get("end")) not in replaced
        ]
        row.metadata = {
            **row.metadata,
            "corrections": kept + [correction_to_json(c) for c in result],
        }
        return True


CORRECTIONS = CorrectionsJob()

"""FINCH-ZK: fine-grained cross-model consistency checking of LLM responses.

Samples answer variants of the prompt from several models (:mod:`.sampling`);
a judge reads each sentence of the response (a block) against each sample
(:mod:`.judge`); weighted judgements label blocks and the response
(:mod:`.verdicts`); flagged blocks are summarized and corrected in place
(:mod:`.mitigate`). Every LLM call goes through one ledger that bounds
concurrency per endpoint and stops at a budget (:mod:`.calls`). In the web
app the offline judge checks each block behind the checker protocol
(:mod:`.checker`).
"""

from .calls import BudgetExceeded, CallLedger, Tally, cost_usd
from .check import DEFAULT_WORKERS, CheckReport, ConsistencyConfig, check_items
from .checker import CLAIM_TYPE, ConsistencyChecker, block_claims
from .evaluate import (
    Checked,
    Labelled,
    checked_from_json,
    evaluate_consistency,
    labelled_from_json,
    segment_offsets,
)
from .items import (
    Block,
    Improvement,
    Item,
    ItemResult,
    Judgement,
    Sample,
    item_document,
    item_from_document,
    item_from_json,
    item_to_json,
    result_to_json,
)
from .judge import LLMJudge, NLIJudge, read_batch_judgements, read_judgement
from .mitigate import mitigate_blocks, rebuild, reflect
from .models import ModelSpec, ModelSpecError, read_spec, read_specs, spec_from_json
from .prompts import Prompts, UnusableAnswer, render, tag_text
from .sampling import DEFAULT_SAMPLES, VARIANTS, assign_samples, sample_item
from .verdicts import (
    DEFAULT_TAU,
    SCORES,
    WEIGHTS,
    block_label,
    block_score,
    response_verdict,
)

__all__ = [
    "CLAIM_TYPE",
    "DEFAULT_SAMPLES",
    "DEFAULT_TAU",
    "DEFAULT_WORKERS",
    "SCORES",
    "VARIANTS",
    "WEIGHTS",
    "Block",
    "BudgetExceeded",
    "CallLedger",
    "CheckReport",
    "Checked",
    "ConsistencyChecker",
    "ConsistencyConfig",
    "Improvement",
    "Item",
    "ItemResult",
    "Judgement",
    "LLMJudge",
    "Labelled",
    "ModelSpec",
    "ModelSpecError",
    "NLIJudge",
    "Prompts",
    "Sample",
    "Tally",
    "UnusableAnswer",
    "assign_samples",
    "block_claims",
    "block_label",
    "block_score",
    "check_items",
    "checked_from_json",
    "cost_usd",
    "evaluate_consistency",
    "item_document",
    "item_from_document",
    "item_from_json",
    "item_to_json",
    "labelled_from_json",
    "mitigate_blocks",
    "read_batch_judgements",
    "read_judgement",
    "read_spec",
    "read_specs",
    "rebuild",
    "reflect",
    "response_verdict",
    "result_to_json",
    "render",
    "sample_item",
    "segment_offsets",
    "spec_from_json",
    "tag_text",
]

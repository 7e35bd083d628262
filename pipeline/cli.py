"""``python -m pipeline``: extract, check, train, evaluate; cite-check and
cite-evaluate for legal citations; provenance, provenance-train and
provenance-evaluate for RAG answers; consistency and consistency-evaluate
for free-form answers checked against other models' samples.

Exit status: 0 when every input line was used, 1 when some lines were skipped
(each reported on stderr as ``file:line: problem``; the rest was processed and
written), 2 on a usage error or a failure that stopped the command.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

from .align import DEFAULT_THRESHOLD
from .checkers.extraction.schema import load_schema
from .errors import InputError, PipelineError
from .jsonl import (
    ReadReport,
    checked_from_json,
    checked_to_json,
    claim_from_json,
    claim_to_json,
    document_from_json,
    label_from_json,
    read_jsonl,
    write_jsonl,
)
from .score import DEFAULT_BATCH_SIZE
from .train import TrainConfig


class Run:
    """Collects skipped-input problems so the exit status can report them."""

    def __init__(self) -> None:
        self.problems = 0

    def report(self, errors: Sequence[InputError]) -> None:
        for error in errors:
            print(f"skipped: {error}", file=sys.stderr)
        self.problems += len(errors)

    def read(self, path: str, parse) -> ReadReport:
        report = read_jsonl(path, parse)
        self.report(report.errors)
        return report

    def known_documents(self, path: str, claims: ReadReport, documents) -> list:
        """Claims whose document exists; the others reported by line."""
        kept, errors = [], []
        for p, line in zip(claims.records, claims.lines, strict=True):
            if p.document_id in documents:
                kept.append(p)
            else:
                errors.append(
                    InputError(
                        f"unknown document id {p.document_id!r}", path=path, line=line
                    )
                )
        self.report(errors)
        return kept


def _documents(run: Run, path: str) -> dict:
    return {d.id: d for d in run.read(path, document_from_json).records}


def llm_config(args, model: str):
    from .llm import LLMConfig

    # Options not given keep the library's defaults.
    given = {
        name: getattr(args, name)
        for name in ("timeout", "max_retries")
        if getattr(args, name) is not None
    }
    return LLMConfig(
        base_url=args.base_url,
        model=model,
        api_key=os.environ.get(args.api_key_env),
        **given,
    )


def _grader(args, prompt):
    """The LLM grader named by ``--grader`` asking ``prompt`` (the claims'
    kind's), or None."""
    if not args.grader:
        return None
    if prompt is None:
        raise PipelineError("--grader: these claims are not graded by an LLM")
    from .grader import LLMGrader

    return LLMGrader(llm_config(args, args.grader), prompt=prompt)


def cmd_extract(args, run: Run) -> None:
    from .checkers.extraction.extract import extract_documents
    from .llm import make_client

    documents = list(_documents(run, args.documents).values())
    schema = load_schema(args.schema)
    config = llm_config(args, args.model)
    results, usage = extract_documents(
        make_client(config), config, documents, schema, progress=True
    )
    failures = [r for r in results if r.error]
    for r in failures:
        print(
            f"extraction failed for document {r.document_id!r}: {r.error}",
            file=sys.stderr,
        )
    if failures and len(failures) == len(results):
        # Nothing extracted is not "some skipped": most often no model
        # server answers at the address given.
        raise PipelineError(
            f"extraction failed for every document ({len(failures)}): does an "
            f"OpenAI-compatible server answer at {config.base_url or 'OpenAI'} "
            f"with model {config.model!r}? (--base-url, --model)"
        )
    run.problems += len(failures)
    written = write_jsonl(
        args.out, (claim_to_json(p) for r in results for p in r.claims)
    )
    print(
        json.dumps(
            {
                "documents": len(documents),
                "failed": len(failures),
                "claims": written,
                "prompt_tokens": usage.prompt_tokens,
                "completion_tokens": usage.completion_tokens,
            }
        )
    )


def load_scorer(args, checker):
    """The scorer ``--scorer`` or ``--grader`` names for claims of
    ``checker``'s kind, or None."""
    if args.grader:
        if args.scorer:
            raise PipelineError("give --scorer or --grader, not both")
        return _grader(args, checker.grader_prompt)
    if args.scorer is None:
        return None
    from .score import NLIScorer

    return NLIScorer(
        args.scorer, device=args.device, batch_size=args.batch_size, quantize=args.int8
    )


def cmd_check(args, run: Run) -> None:
    from .checkers.extraction import ExtractionChecker
    from .checkers.extraction.check import check_claims

    if args.scorer == "none":
        args.scorer = None
    elif args.scorer is None and not args.grader:
        from .bases import starter_scorer

        args.scorer = starter_scorer()
        print(
            f"scorer: the starter scorer ({args.scorer}); --scorer none aligns only"
            if args.scorer
            else "scorer: none built (make setup builds the starter): alignment only",
            file=sys.stderr,
        )
    documents = _documents(run, args.documents)
    claims = run.read(args.claims, claim_from_json)
    known = run.known_documents(args.claims, claims, documents)
    report = check_claims(
        documents,
        known,
        scorer=load_scorer(args, ExtractionChecker),
        schema=load_schema(args.schema) if args.schema else None,
        align_threshold=args.align_threshold,
        progress=True,
    )
    write_jsonl(args.out, (checked_to_json(c) for c in report.checked))
    counts = {
        verdict: sum(c.verdict == verdict for c in report.checked)
        for verdict in ("safe", "unsafe", "unscored")
    }
    print(json.dumps({"checked": len(report.checked), **counts}))


def cmd_train(args, run: Run) -> None:
    from .checkers.extraction import ExtractionChecker
    from .train import ProgressBars, train_scorer

    documents: dict = {}
    for path in args.documents:
        documents.update(_documents(run, path))
    known: list = []
    for path in args.claims:
        claims = run.read(path, claim_from_json)
        known += run.known_documents(path, claims, documents)
    labels = {
        lab.claim_id: lab
        for path in args.labels
        for lab in run.read(path, label_from_json).records
    }
    from .bases import base_or_best

    config = TrainConfig(
        base=base_or_best(args.base),
        stages=tuple(args.stages.split(",")),
        silver_epochs=args.silver_epochs,
        human_epochs=args.human_epochs,
        silver_limit=args.silver_limit,
        device=args.device,
        seed=args.seed,
    )
    bars = ProgressBars()
    schema = load_schema(args.schema) if args.schema else None
    metadata = train_scorer(
        ExtractionChecker(documents, schema=schema),
        known,
        labels,
        args.out,
        config=config,
        grader=_grader(args, ExtractionChecker.grader_prompt),
        on_progress=bars,
    )
    bars.close()
    print(
        json.dumps(
            {k: metadata[k] for k in ("threshold", "label_counts", "validation")}
        )
    )


def cmd_train_nli(args, run: Run) -> None:
    from dataclasses import replace

    from .build_cache import keep_build, mark_build, reuse_build, written_whole
    from .nli import NLI_CONFIG, nli_key, read_nli_pairs, train_nli
    from .train import ProgressBars

    config = replace(
        NLI_CONFIG,
        base=args.base,
        silver_epochs=args.epochs,
        batch_size=args.batch_size,
        device=args.device,
        seed=args.seed,
    )
    key = nli_key(
        args.pairs, config=config, held_out_sources=args.hold_out, limit=args.limit
    )
    if not args.force and reuse_build(args.out, key):
        return
    pairs, errors = read_nli_pairs(args.pairs)
    run.report(errors)
    bars = ProgressBars()
    try:
        with written_whole(args.out) as tmp:
            train_nli(
                pairs,
                tmp,
                config=config,
                held_out_sources=args.hold_out,
                limit=args.limit,
                on_progress=bars,
            )
            metadata = mark_build(tmp, key)
    finally:
        bars.close()
    keep_build(args.out, key)
    print(
        json.dumps(
            {k: metadata[k] for k in ("pairs", "held_out", "train_seconds", "device")},
            indent=2,
        )
    )


def cmd_evaluate(args, run: Run) -> None:
    from .evaluate import evaluate_checked

    checked = run.read(args.checked, checked_from_json).records
    labels = {
        lab.claim_id: lab for lab in run.read(args.labels, label_from_json).records
    }
    print(json.dumps(evaluate_checked(checked, labels), indent=2))


def add_llm_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--base-url",
        default=os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1"),
        help="OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp...); "
        "default $OPENAI_BASE_URL or OpenAI",
    )
    p.add_argument(
        "--api-key-env", default="OPENAI_API_KEY", help="env var holding the API key"
    )
    p.add_argument(
        "--timeout", type=float, help="seconds per request (default: LLMConfig.timeout)"
    )
    p.add_argument(
        "--max-retries",
        type=int,
        help="retries on 429/5xx/timeout (default: LLMConfig.max_retries)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m pipeline",
        description="SafePassage: extract with an LLM, align evidence, score, train.",
        epilog=__doc__.split("\n\n", 1)[1],
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("extract", help="extract entities with an OpenAI-compatible LLM")
    p.add_argument("--documents", required=True, help="documents JSONL")
    p.add_argument("--schema", required=True, help="entity schema JSON")
    p.add_argument("--model", required=True, help="LLM model name")
    p.add_argument("--out", required=True, help="claims JSONL to write")
    add_llm_options(p)
    p.set_defaults(func=cmd_extract)

    p = sub.add_parser("check", help="align and score claims, give verdicts")
    p.add_argument("--documents", required=True)
    p.add_argument("--claims", "--predictions", required=True, help="claims JSONL")
    p.add_argument("--out", required=True, help="checked claims JSONL to write")
    p.add_argument(
        "--scorer",
        help="trained scorer folder or model name (default: the starter scorer "
        "where make setup built it; none: align only)",
    )
    p.add_argument("--schema", help="entity schema JSON (display names, renderers)")
    p.add_argument("--align-threshold", type=float, default=DEFAULT_THRESHOLD)
    p.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE)
    p.add_argument("--device", help="cpu, cuda... (default: cuda if present)")
    p.add_argument(
        "--int8", action="store_true", help="int8 dynamic quantisation (CPU)"
    )
    p.add_argument("--grader", help="score with this LLM (Appendix B) instead")
    add_llm_options(p)
    p.set_defaults(func=cmd_check)

    p = sub.add_parser(
        "train",
        help="fine-tune a scorer: silver stage, then labels (none: silver only)",
    )
    p.add_argument(
        "--documents", required=True, action="append", help="documents JSONL (repeat)"
    )
    p.add_argument(
        "--claims",
        "--predictions",
        action="append",
        default=[],
        help="claims JSONL (repeat; none: silver from fields found in the text)",
    )
    p.add_argument(
        "--labels",
        action="append",
        default=[],
        help="labels JSONL (repeat; none or empty: a zero-label scorer, validated "
        "on silver pairs of held-out documents)",
    )
    p.add_argument("--out", required=True, help="folder for the trained scorer")
    p.add_argument(
        "--base",
        help="base model name or path (default: the best this machine has: the "
        "starter scorer, $NLI_MODEL, the entailment base at $NLI_BASE, the "
        "packaged MiniLM)",
    )
    p.add_argument("--schema", help="entity schema JSON")
    p.add_argument(
        "--stages",
        default=",".join(TrainConfig.stages),
        help="silver,human | silver | human",
    )
    p.add_argument("--silver-epochs", type=int, default=TrainConfig.silver_epochs)
    p.add_argument("--human-epochs", type=int, default=TrainConfig.human_epochs)
    p.add_argument("--silver-limit", type=int, default=TrainConfig.silver_limit)
    p.add_argument("--device")
    p.add_argument("--seed", type=int, default=TrainConfig.seed)
    p.add_argument("--grader", help="add this LLM's grades as silver labels")
    add_llm_options(p)
    p.set_defaults(func=cmd_train)

    p = sub.add_parser(
        "train-nli",
        help="fine-tune an entailment base on NLI pairs (the base scorers start from)",
        description="Two-way head, p(entailment); a share of each source's "
        "premises is held out and measured before and after training.",
    )
    p.add_argument(
        "--pairs",
        required=True,
        nargs="+",
        help='NLI pairs JSONL: {"premise", "hypothesis", "label", "source"} or '
        'SNLI/MultiNLI {"sentence1", "sentence2", "gold_label"}',
    )
    p.add_argument("--out", required=True, help="folder for the entailment base")
    p.add_argument("--base", default=TrainConfig.base, help="base model name or path")
    p.add_argument(
        "--hold-out",
        action="append",
        default=[],
        metavar="SOURCE",
        help="hold out every pair of this source (repeat)",
    )
    p.add_argument("--limit", type=int, help="train on at most this many pairs")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=TrainConfig.batch_size)
    p.add_argument("--device")
    p.add_argument("--seed", type=int, default=TrainConfig.seed)
    p.add_argument(
        "--force",
        action="store_true",
        help="train even if it is built or in the scorer cache ($SCORER_CACHE)",
    )
    p.set_defaults(func=cmd_train_nli)

    p = sub.add_parser("evaluate", help="precision/recall/F1 of flagging unsafe")
    p.add_argument("--checked", required=True, help="output of check")
    p.add_argument("--labels", required=True)
    p.set_defaults(func=cmd_evaluate)

    from .checkers.citations.commands import add_commands as add_citation_commands
    from .checkers.consistency.commands import add_commands as add_consistency_commands
    from .checkers.provenance.commands import add_commands as add_provenance_commands

    add_citation_commands(sub)
    add_provenance_commands(sub)
    add_consistency_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    run = Run()
    try:
        args.func(args, run)
    except PipelineError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 1 if run.problems else 0

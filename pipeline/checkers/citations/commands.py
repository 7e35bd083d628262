"""``python -m pipeline cite-check`` and ``cite-evaluate``."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from ...cli import Run, add_llm_options, llm_config, load_scorer
from ...errors import PipelineError
from ...jsonl import document_from_json, write_jsonl
from ...score import DEFAULT_BATCH_SIZE
from .checker import CitationChecker, citation_claims
from .checks import CaseLaw, CitationResult
from .courtlistener import DEFAULT_BASE_URL, CourtListener
from .reporters import Coverage
from .sources import CitationIndex, LocalStore

TOKEN_ENV = "COURTLISTENER_API_TOKEN"


def result_to_json(r: CitationResult) -> dict[str, Any]:
    """One ``cite-check`` output line."""
    c = r.citation
    matched = None
    if r.matched is not None:
        matched = {"opinion_id": r.matched.id, "case_name": r.matched.case_name}
    evidence = None
    if r.evidence is not None:
        evidence = {
            "start": r.evidence.start,
            "end": r.evidence.end,
            "text": r.evidence.text,
        }
    return {
        "brief_id": c.brief_id,
        "start": c.start,
        "end": c.end,
        "text": c.text,
        "form": c.form,
        "status": r.status,
        "problems": list(r.problems),
        "matched": matched,
        "evidence": evidence,
        "score": r.score,
        "checks": [
            {"name": ch.name, "passed": ch.passed, "detail": ch.detail}
            for ch in r.checks
        ],
    }


def caselaw_from_args(args) -> CaseLaw:
    """The sources the options name, in lookup order: store, indexes,
    CourtListener."""
    sources: list[Any] = [LocalStore.read(args.caselaw)]
    sources += [CitationIndex.read(path) for path in args.index]
    if args.courtlistener:
        token = os.environ.get(args.courtlistener_token_env)
        if not token:
            raise PipelineError(
                f"--courtlistener needs an API token in ${args.courtlistener_token_env}"
            )
        sources.append(CourtListener(token, base_url=args.courtlistener_url))
    return CaseLaw(sources, coverage=Coverage.parse(args.complete_reporters))


def cmd_cite_check(args, run: Run) -> None:
    briefs = {d.id: d for d in run.read(args.briefs, document_from_json).records}
    checker = CitationChecker(briefs, caselaw=caselaw_from_args(args))
    results, errors = checker.results(
        citation_claims(briefs), scorer=load_scorer(args, checker)
    )
    run.report(errors)
    agent: dict[str, int] = {}
    if args.agent:
        results, agent["agent_steps"] = _settle_with_agent(
            args, run, results, checker.caselaw, briefs
        )
    write_jsonl(args.out, (result_to_json(r) for r in results))
    counts = {
        s: sum(r.status == s for r in results)
        for s in ("verified", "hallucinated", "unverifiable")
    }
    print(
        json.dumps(
            {"briefs": len(briefs), "citations": len(results), **counts, **agent}
        )
    )


def _settle_with_agent(
    args, run: Run, results: list[CitationResult], caselaw: CaseLaw, briefs
) -> tuple[list[CitationResult], int]:
    """``--agent``: the LLM investigates what the checks left unverifiable.
    A failed episode leaves its brief's citations so and counts as a
    problem (exit status 1), as a failed extraction does."""
    from ...llm import make_client
    from .agent import settle_with_agent

    config = llm_config(args, args.agent)
    report = settle_with_agent(
        results,
        caselaw,
        client=make_client(config),
        config=config,
        briefs={i: d.text for i, d in briefs.items()},
    )
    failed = [e for e in report.episodes if e.error]
    for e in failed:
        print(f"agent failed for brief {e.brief_id!r}: {e.error}", file=sys.stderr)
    run.problems += len(failed)
    return report.results, report.steps


def cmd_cite_evaluate(args, run: Run) -> None:
    from .evaluate import checked_line, evaluate_citations, truth_line

    checked = run.read(args.checked, checked_line).records
    truth = run.read(args.truth, truth_line).records
    print(json.dumps(evaluate_citations(checked, truth), indent=2))


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "cite-check",
        help="check the case citations of briefs against case law",
        description="Each citation: exists, case name, pincite, quotation, "
        "proposition; verified, hallucinated or unverifiable.",
    )
    p.add_argument("--briefs", required=True, help='briefs JSONL: {"id", "text"}')
    p.add_argument("--caselaw", required=True, help="opinions JSONL (the local store)")
    p.add_argument(
        "--index",
        action="append",
        default=[],
        help='citation index JSONL {"citation", "case_name", "date"} (repeat)',
    )
    p.add_argument(
        "--complete-reporters",
        default="",
        help='reporter volumes the sources hold completely, e.g. "U.S.:329-579"; '
        "a citation there that matches nothing does not exist",
    )
    p.add_argument(
        "--courtlistener", action="store_true", help="also ask CourtListener"
    )
    p.add_argument("--courtlistener-url", default=DEFAULT_BASE_URL)
    p.add_argument(
        "--courtlistener-token-env",
        default=TOKEN_ENV,
        help=f"env var holding the API token (default {TOKEN_ENV})",
    )
    p.add_argument("--out", required=True, help="checked citations JSONL to write")
    p.add_argument(
        "--scorer", help="scorer folder for propositions (none: propositions unchecked)"
    )
    p.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE)
    p.add_argument("--device")
    p.add_argument("--int8", action="store_true")
    p.add_argument(
        "--agent",
        metavar="MODEL",
        help="let this LLM investigate the citations left unverifiable",
    )
    add_llm_options(p)
    p.set_defaults(func=cmd_cite_check, grader=None)

    p = sub.add_parser(
        "cite-evaluate", help="P/R/F1 of hallucinated citations against a truth file"
    )
    p.add_argument("--checked", required=True, help="output of cite-check")
    p.add_argument("--truth", required=True, help="true citations JSONL")
    p.set_defaults(func=cmd_cite_evaluate)

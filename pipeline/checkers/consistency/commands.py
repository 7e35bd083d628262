"""``python -m pipeline consistency`` and ``consistency-evaluate``.

The only place in the checker that reads the environment: each model's key
comes from the variable its ``api_key_env`` names.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

from ...cli import Run
from ...errors import PipelineError
from ...jsonl import write_jsonl
from ...score import DEFAULT_BASE_MODEL, DEFAULT_BATCH_SIZE
from .calls import CallLedger
from .check import DEFAULT_WORKERS, ConsistencyConfig, check_items
from .evaluate import checked_from_json, evaluate_consistency, labelled_from_json
from .items import item_from_json, result_to_json
from .judge import LLMJudge, NLIJudge
from .models import ModelSpec, read_spec, read_specs
from .sampling import DEFAULT_SAMPLES, VARIANTS
from .verdicts import DEFAULT_TAU


def api_keys(specs: Sequence[ModelSpec]) -> dict[str, str]:
    """The keys the models name, read from the environment.

    Raises:
        PipelineError: a variable named by ``api_key_env`` is not set.
    """
    keys = {}
    for spec in specs:
        name = spec.api_key_env
        if name and name not in keys:
            if not os.environ.get(name):
                raise PipelineError(
                    f"{name} is not set (the api_key_env of model {spec.model!r})"
                )
            keys[name] = os.environ[name]
    return keys


def _optional_spec(value: str | None) -> ModelSpec | None:
    return read_spec(value) if value else None


def _judge(args, spec: ModelSpec | None, ledger: CallLedger):
    if not args.offline_judge:
        assert spec is not None  # cmd_consistency requires --judge here
        return LLMJudge(spec, ledger, batch=args.batch_judge)
    from ...score import NLIScorer

    scorer = NLIScorer(args.scorer, device=args.device, batch_size=args.batch_size)
    return NLIJudge(scorer)


def cmd_consistency(args, run: Run) -> None:
    if not args.offline_judge and not args.judge:
        raise PipelineError("--judge is required unless --offline-judge")
    if args.reflect and not args.improver:
        raise PipelineError("--reflect needs --improver")
    judge_spec = _optional_spec(args.judge)
    samplers = read_specs(args.samplers) if args.samplers else []
    reformulator = _optional_spec(args.reformulator) or judge_spec
    improver = _optional_spec(args.improver)
    try:
        config = ConsistencyConfig(
            samples=args.samples,
            seed=args.seed,
            variants=tuple(v.strip() for v in args.variants.split(",")),
            tau=args.tau,
            reflect=args.reflect,
        )
    except ValueError as e:
        raise PipelineError(str(e)) from None
    items = run.read(args.items, item_from_json).records
    specs = [
        s
        for s in dict.fromkeys([*samplers, judge_spec, reformulator, improver])
        if s is not None
    ]
    ledger = CallLedger(
        specs,
        api_keys=api_keys(specs),
        budget_usd=args.budget,
        timeout=args.timeout,
        max_retries=args.max_retries,
    )
    from tqdm import tqdm

    bar = tqdm(total=len(items), desc="checking", unit="item")
    try:
        report = check_items(
            items,
            judge=_judge(args, judge_spec, ledger),
            samplers=samplers,
            reformulator=reformulator,
            improver=improver,
            ledger=ledger,
            config=config,
            workers=args.workers,
            on_progress=lambda done, total: bar.update(done - bar.n),
        )
    except ValueError as e:
        raise PipelineError(str(e)) from None
    finally:
        bar.close()
    write_jsonl(args.out, (result_to_json(r) for r in report.results))
    for item_id, error in report.failures:
        print(f"consistency failed for item {item_id!r}: {error}", file=sys.stderr)
    if report.stopped:
        print(
            f"stopped: {report.stopped}; {len(report.not_started)} items not started",
            file=sys.stderr,
        )
    run.problems += len(report.failures) + len(report.not_started)
    print(
        json.dumps(
            {
                "checked": len(report.results),
                "non_factual": sum(r.label == "NON-FACTUAL" for r in report.results),
                "failed": len(report.failures),
                "not_started": len(report.not_started),
                "stopped": report.stopped,
                "usage": report.usage,
            }
        )
    )


def cmd_consistency_evaluate(args, run: Run) -> None:
    checked = run.read(args.checked, checked_from_json).records
    labelled = run.read(args.labels, labelled_from_json).records
    print(json.dumps(evaluate_consistency(checked, labelled), indent=2))


def add_commands(sub: argparse._SubParsersAction) -> None:
    config = 'a JSON file or inline JSON: {"model", "base_url", "api_key_env"?, ...}'
    p = sub.add_parser(
        "consistency",
        help="FINCH-ZK: check responses against samples from other models",
    )
    p.add_argument(
        "--items",
        required=True,
        help='items JSONL: {"id" (or FELM\'s "index"), "prompt", "response", '
        '"samples"?: [text | {"text", "model"?, "variant"?}]}',
    )
    p.add_argument("--out", required=True, help="checked items JSONL to write")
    p.add_argument(
        "--samplers",
        help="sampler models: a JSON list of model configs, or a file holding "
        "one (not needed when every item has samples)",
    )
    p.add_argument("--judge", help=f"judge model, {config}")
    p.add_argument(
        "--reformulator",
        help="model making the LLM prompt variants (default: --judge)",
    )
    p.add_argument(
        "--improver", help="model correcting flagged blocks (none: no correction)"
    )
    p.add_argument("--samples", type=int, default=DEFAULT_SAMPLES)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--variants",
        default=",".join(VARIANTS),
        help="prompt variations to cycle through (default %(default)s)",
    )
    p.add_argument(
        "--offline-judge",
        action="store_true",
        help="judge with the NLI --scorer instead of an LLM (--judge, if given, "
        "still makes the variants)",
    )
    p.add_argument(
        "--scorer",
        default=DEFAULT_BASE_MODEL,
        help="NLI scorer folder or model for --offline-judge (default %(default)s)",
    )
    p.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE)
    p.add_argument("--device", help="cpu, cuda... for the scorer")
    p.add_argument(
        "--batch-judge",
        action="store_true",
        help="judge all blocks against a sample in one call",
    )
    p.add_argument(
        "--reflect",
        action="store_true",
        help="rewrite each response by cross-model reflection (needs --improver)",
    )
    p.add_argument(
        "--budget",
        type=float,
        help="stop before the estimated cost in USD passes this (models need prices)",
    )
    p.add_argument("--tau", type=float, default=DEFAULT_TAU)
    p.add_argument("--workers", type=int, default=DEFAULT_WORKERS, help="items at once")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per request")
    p.add_argument(
        "--max-retries", type=int, default=3, help="retries on 429/5xx/timeout"
    )
    p.set_defaults(func=cmd_consistency)

    p = sub.add_parser(
        "consistency-evaluate",
        help="precision / recall / F1 / balanced accuracy and correlations of "
        "checked items against FELM labels",
    )
    p.add_argument("--checked", required=True, help="output of consistency")
    p.add_argument(
        "--labels",
        required=True,
        help='FELM JSONL: "index", "response", "segmented_response", "labels"',
    )
    p.set_defaults(func=cmd_consistency_evaluate)

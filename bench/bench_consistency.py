"""FINCH-ZK on FELM: sentence- and response-level precision, recall, F1 and
balanced accuracy, and Pearson / Spearman of the response score, beside the
paper's Table 1, in one run.

It needs real models: ``--samplers`` (a JSON list of model configurations,
as ``python -m pipeline consistency`` reads) answer the prompts and
``--judge`` reads every sentence against every sample. The run goes through
the command line as a user's would, so ``--budget`` stops it before it
spends more. FELM is read from beside the repository unless ``--felm``
names the file.

    python bench/bench_consistency.py --samplers S.json --judge J.json \\
        [--limit 100] [--samples 10] [--budget 20] [--batch-judge]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FELM = ROOT.parent / "shared" / "data" / "felm" / "all.jsonl"

#: The paper's Table 1 (FELM): sentence P, R, F1, BA; response P, R, F1, BA,
#: Pearson, Spearman (percent).
PAPER = {
    "GPT-4 judge (vanilla)": (64.0, 24.4, 35.4, 60.7, 62.4, 39.4, 48.3, 63.8),
    "GPT-4 judge (CoT)": (68.1, 30.4, 42.0, 63.7, 64.7, 46.1, 53.8, 66.8),
    "GPT-4 judge (RAG)": (62.9, 39.2, 48.3, 67.1, 64.3, 51.1, 56.9, 68.5),
    "SelfCheckGPT": (41.2, 54.1, 46.8, 68.7, 73.7, 53.5, 62.0, 72.0, 59.5, 59.9),
    "FINCH-ZK": (45.8, 53.1, 49.2, 69.8, 83.8, 53.2, 65.1, 74.0, 63.1, 61.5),
}
HEAD = ("P", "R", "F1", "BA", "P", "R", "F1", "BA", "Pearson", "Spearman")


def felm_items(path: Path, limit: int | None) -> list[dict]:
    """FELM's lines as consistency items (id = FELM's index); the two
    responses that are not text are left out."""
    items = []
    for line in path.open(encoding="utf-8"):
        row = json.loads(line)
        if isinstance(row.get("response"), str) and row["response"].strip():
            items.append(
                {
                    "id": row["index"],
                    "prompt": row["prompt"],
                    "response": row["response"],
                }
            )
    return items[:limit]


def ours(figures: dict) -> tuple[float | None, ...]:
    """Our row of the table, in percent."""
    seg, resp = figures["segment"], figures["response"]
    cells = [seg[k] for k in ("precision", "recall", "f1", "balanced_accuracy")]
    cells += [resp[k] for k in ("precision", "recall", "f1", "balanced_accuracy")]
    cells += [resp["pearson"], resp["spearman"]]
    return tuple(None if c is None else 100 * c for c in cells)


def print_table(rows: dict[str, tuple]) -> None:
    print(f"{'':<24}{'sentence':^36}{'response':^54}")
    print(f"{'method':<24}" + "".join(f"{h:>9}" for h in HEAD))
    for name, cells in rows.items():
        cells = (*cells, *[None] * (len(HEAD) - len(cells)))
        text = "".join(f"{'-':>9}" if c is None else f"{c:>9.1f}" for c in cells)
        print(f"{name:<24}{text}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samplers", required=True, help="sampler models (JSON)")
    parser.add_argument("--judge", required=True, help="judge model (JSON)")
    parser.add_argument("--felm", type=Path, default=FELM)
    parser.add_argument("--limit", type=int, help="the first N responses only")
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--budget", type=float, help="USD the run may spend")
    parser.add_argument("--batch-judge", action="store_true")
    parser.add_argument("--work", type=Path, default=ROOT / "var" / "bench-consistency")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    items, out = args.work / "items.jsonl", args.work / "checked.jsonl"
    rows = felm_items(args.felm, args.limit)
    items.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    command = [
        sys.executable, "-m", "pipeline", "consistency",
        "--items", str(items), "--out", str(out),
        "--samplers", args.samplers, "--judge", args.judge,
        "--samples", str(args.samples),
    ]  # fmt: skip
    if args.budget is not None:
        command += ["--budget", str(args.budget)]
    if args.batch_judge:
        command.append("--batch-judge")
    # Exit status 1 means some items failed (named on stderr); the rest count.
    if subprocess.run(command, cwd=ROOT).returncode not in (0, 1):
        sys.exit("the consistency run failed")
    evaluated = subprocess.run(
        [sys.executable, "-m", "pipeline", "consistency-evaluate",
         "--checked", str(out), "--labels", str(args.felm)],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    if evaluated.returncode not in (0, 1):
        sys.exit(evaluated.stderr)
    figures = json.loads(evaluated.stdout)
    print(f"FELM responses checked: {figures['items']} of {len(rows)}")
    print_table({**PAPER, "ours": ours(figures)})


if __name__ == "__main__":
    main()

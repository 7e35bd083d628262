import pytest

from pipeline.evaluate import (
    best_threshold,
    cohen_kappa,
    evaluate_checked,
    flag_metrics,
    model_rank_rho,
    precision_recall_curve,
    roc_auc,
)
from pipeline.types import Alignment, CheckedClaim, Claim, Label


def checked(pid, verdict, model="m1"):
    p = Claim(pid, "d", "T", "v", "ctx", model=model)
    return CheckedClaim(p, "T: v", Alignment(1.0, 0, 3, "ctx"), 0.9, verdict, None)


def test_flag_metrics_treat_unsafe_as_the_positive_class():
    m = flag_metrics([True, True, False, False], [True, False, True, False])
    assert (m["precision"], m["recall"], m["f1"]) == (0.5, 0.5, 0.5)
    assert m["confusion"] == {"tp": 1, "fp": 1, "fn": 1, "tn": 1}


def test_best_threshold_separates_scores_and_counts_forced_flags():
    threshold, f1 = best_threshold([0.1, 0.2, 0.8, 0.9], [True, True, False, False])
    assert 0.2 < threshold <= 0.8 and f1 == 1.0
    # A forced flag (not aligned) on a safe claim costs precision whatever the
    # threshold.
    _, f1 = best_threshold(
        [0.1, 0.9, 0.0], [True, False, False], forced=[False, False, True]
    )
    assert f1 < 1.0


def test_evaluate_breaks_down_by_kind_and_model():
    rows = [
        checked("a", "unsafe", "big"),
        checked("b", "safe", "big"),
        checked("c", "safe", "small"),
        checked("d", "unsafe", "small"),
        checked("e", "safe", "small"),
    ]
    labels = {
        "a": Label("a", "unsafe", {"kind": "hallucinated_context"}),
        "b": Label("b", "safe", {"kind": "exact"}),
        "c": Label("c", "unsafe", {"kind": "wrong_value"}),
        "d": Label("d", "unsafe", {"kind": "wrong_value"}),
    }
    result = evaluate_checked(rows, labels)
    assert result["n"] == 4 and result["unlabelled"] == 1
    assert result["recall"] == round(2 / 3, 4) and result["precision"] == 1.0
    assert result["by_kind"]["wrong_value"] == {
        "n": 2,
        "labelled_unsafe": 2,
        "flagged": 1,
        "accuracy": 0.5,
    }
    assert result["by_model"]["small"] == {
        "n": 3,
        "safepassage_score": round(2 / 3, 4),
        "n_labelled": 2,
        "human_score": 0.0,
    }


def model_rows(scores):
    """A by-model breakdown from ``{model: (safepassage, human)}``."""
    return {
        m: {"n": 10, "safepassage_score": sp, "n_labelled": 10, "human_score": h}
        for m, (sp, h) in scores.items()
    }


def test_model_rank_rho_is_one_when_the_scorer_ranks_the_llms_as_experts_do():
    same = model_rows({"a": (0.9, 0.95), "b": (0.7, 0.8), "c": (0.5, 0.6)})
    assert model_rank_rho(same) == 1.0
    swapped = model_rows({"a": (0.9, 0.6), "b": (0.7, 0.8), "c": (0.5, 0.95)})
    assert model_rank_rho(swapped) == -1.0


def test_model_rank_rho_needs_three_labelled_models():
    rows = model_rows({"a": (0.9, 0.95), "b": (0.7, 0.8)})
    assert model_rank_rho(rows) is None
    rows["c"] = {**rows["a"], "n_labelled": 0, "human_score": None}
    assert model_rank_rho(rows) is None
    rows["c"] = {**rows["a"], "safepassage_score": None}  # labelled, unchecked
    assert model_rank_rho(rows) is None


def test_evaluate_reports_the_rank_agreement_across_models():
    rows, labels = [], {}
    for model, n_safe in (("best", 3), ("mid", 2), ("worst", 1)):
        for i in range(3):
            pid = f"{model}{i}"
            verdict = "safe" if i < n_safe else "unsafe"
            rows.append(checked(pid, verdict, model))
            labels[pid] = Label(pid, verdict)
    assert evaluate_checked(rows, labels)["model_rank_rho"] == 1.0


def test_cohen_kappa_textbook_example():
    # 50 items: both yes 20, yes/no 5, no/yes 10, both no 15 -> p_o 0.7,
    # p_e 0.5 * 0.6 + 0.5 * 0.4 = 0.5, kappa 0.4.
    pairs = (
        [("yes", "yes")] * 20
        + [("yes", "no")] * 5
        + [("no", "yes")] * 10
        + [("no", "no")] * 15
    )
    assert cohen_kappa(pairs) == 0.4
    assert cohen_kappa(iter(pairs)) == 0.4  # any iterable


def test_cohen_kappa_perfect_chance_and_worse_than_chance():
    assert cohen_kappa([("safe", "safe"), ("unsafe", "unsafe")] * 3) == 1.0
    # Agreement exactly at chance level.
    chance = [("a", "a"), ("a", "b"), ("b", "a"), ("b", "b")]
    assert cohen_kappa(chance) == 0.0
    assert cohen_kappa([("a", "b"), ("b", "a")]) == -1.0


def test_cohen_kappa_is_undefined_without_pairs_or_with_a_single_class():
    assert cohen_kappa([]) is None
    assert cohen_kappa([("safe", "safe")] * 5) is None
    # One rater used one class only: defined, and no better than chance.
    assert cohen_kappa([("safe", "safe"), ("safe", "unsafe")]) == 0.0


def test_precision_recall_curve_flags_low_scores_and_moves_ties_together():
    scores = [0.1, 0.2, 0.2, 0.6, 0.9]
    unsafe = [True, True, False, True, False]
    assert precision_recall_curve(scores, unsafe) == [
        {"threshold": 0.1, "precision": 1.0, "recall": 0.3333},
        {"threshold": 0.2, "precision": 0.6667, "recall": 0.6667},
        {"threshold": 0.6, "precision": 0.75, "recall": 1.0},
        {"threshold": 0.9, "precision": 0.6, "recall": 1.0},
    ]
    # The point at a cut agrees with flag_metrics on score < any threshold
    # above it.
    m = flag_metrics([s < 0.5 for s in scores], unsafe)
    point = precision_recall_curve(scores, unsafe)[1]
    assert (point["precision"], point["recall"]) == (m["precision"], m["recall"])


def test_precision_recall_curve_without_unsafe_labels_is_empty():
    assert precision_recall_curve([0.3, 0.8], [False, False]) == []
    assert precision_recall_curve([], []) == []


def test_the_precision_threshold_is_the_highest_whose_flags_are_right_often_enough():
    from pipeline.evaluate import precision_threshold

    scores = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
    unsafe = [True, True, True, False, True, False, False, False]
    # Below 0.3: 3 of 3 right; below 0.5: 4 of 5 (0.8); below 0.4: 3 of 4.
    near = {"abs": 1e-5}
    assert precision_threshold(scores, unsafe, target=1.0) == pytest.approx(0.3, **near)
    assert precision_threshold(scores, unsafe, target=0.8) == pytest.approx(0.5, **near)
    assert precision_threshold(scores, [False] * 8, target=0.5) is None


def test_roc_auc_is_one_when_positives_outscore_every_negative():
    assert roc_auc([0.1, 0.2, 0.8, 0.9], [False, False, True, True]) == 1.0


def test_roc_auc_is_zero_when_the_scores_are_reversed():
    assert roc_auc([0.9, 0.8, 0.2, 0.1], [False, False, True, True]) == 0.0


def test_roc_auc_counts_all_ties_as_a_coin_flip():
    assert roc_auc([0.5] * 4, [True, False, True, False]) == 0.5


def test_roc_auc_counts_a_tied_pair_half():
    # Positive-negative pairs: 0.4>0.1, 0.4=0.4 (half), 0.8>0.1, 0.8>0.4 -> 3.5 of 4.
    auc = roc_auc([0.1, 0.4, 0.4, 0.8], [False, True, False, True])
    assert auc == pytest.approx(0.875)


def test_roc_auc_is_undefined_with_one_class():
    assert roc_auc([0.1, 0.9], [True, True]) is None
    assert roc_auc([0.1, 0.9], [False, False]) is None
    assert roc_auc([], []) is None


def test_krippendorff_alpha_matches_the_reference_example():
    from pipeline.evaluate import krippendorff_alpha

    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability",
    # nominal data: four coders, twelve units, missing values left out.
    units = [
        ["1", "1", "1"],
        ["2", "2", "3", "2"],
        ["3", "3", "3", "3"],
        ["3", "3", "3", "3"],
        ["2", "2", "2", "2"],
        ["1", "2", "3", "4"],
        ["4", "4", "4", "4"],
        ["1", "1", "2", "1"],
        ["2", "2", "2", "2"],
        ["5", "5", "5"],
        ["1", "1"],
        ["3"],
    ]
    assert krippendorff_alpha(units) == 0.7434
    assert krippendorff_alpha([["a", "a"], ["b", "b"]]) == 1.0
    assert krippendorff_alpha([["a", "b"], ["b", "a"]]) == -0.5
    # Undefined: nothing pairable, or one class only.
    assert krippendorff_alpha([["a"], []]) is None
    assert krippendorff_alpha([["a", "a"], ["a", "a", "a"]]) is None

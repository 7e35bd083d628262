from pipeline.evaluate import best_threshold, evaluate_checked, flag_metrics
from pipeline.types import Alignment, CheckedPrediction, Label, Prediction


def checked(pid, verdict, model="m1"):
    p = Prediction(pid, "d", "T", "v", "ctx", model=model)
    return CheckedPrediction(p, "T: v", Alignment(1.0, 0, 3, "ctx"), 0.9, verdict, None)


def test_flag_metrics_treat_unsafe_as_the_positive_class():
    m = flag_metrics([True, True, False, False], [True, False, True, False])
    assert (m["precision"], m["recall"], m["f1"]) == (0.5, 0.5, 0.5)
    assert m["confusion"] == {"tp": 1, "fp": 1, "fn": 1, "tn": 1}


def test_best_threshold_separates_scores_and_counts_forced_flags():
    threshold, f1 = best_threshold([0.1, 0.2, 0.8, 0.9], [True, True, False, False])
    assert 0.2 < threshold <= 0.8 and f1 == 1.0
    # A forced flag (not aligned) on a safe prediction costs precision whatever the
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

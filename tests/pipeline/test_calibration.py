import json
import math

import numpy as np
import pytest

from pipeline.calibration import (
    Calibration,
    IsotonicCalibrator,
    TemperatureCalibrator,
    calibrator_from_json,
    expected_calibration_error,
    fit_calibration,
    fit_isotonic,
    fit_temperature,
    operating_point,
    reliability_diagram,
)


def miscalibrated(n, *, seed, slope=3.0, bias=1.0):
    """Gold labels drawn from a true P(safe), and a scorer that reports
    ``sigmoid(slope * logit(p) + bias)``: overconfident and biased to safe."""
    rs = np.random.RandomState(seed)
    p = rs.beta(2.0, 1.0, size=n)
    safe = rs.rand(n) < p
    score = 1 / (1 + np.exp(-(slope * np.log(p / (1 - p)) + bias)))
    return score, safe


def flags_at(scores, threshold):
    return np.asarray(scores) < threshold


@pytest.mark.parametrize("method", ["isotonic", "temperature"])
def test_calibration_at_least_halves_ece_on_held_out_claims(method):
    score, safe = miscalibrated(8000, seed=1)
    raw_ece = expected_calibration_error(score[4000:], safe[4000:])
    calibration = fit_calibration(score[:4000], safe[:4000], method=method)
    ece = expected_calibration_error(calibration(score[4000:]), safe[4000:])
    assert raw_ece > 0.1  # the generator really is miscalibrated
    assert ece <= raw_ece / 2


def test_temperature_recovers_the_generators_inverse():
    # logit(p) = (logit(score) - 1) / 3, so slope 1/3 and bias -1/3.
    score, safe = miscalibrated(20000, seed=2)
    fitted = fit_temperature(score, safe)
    assert fitted.slope == pytest.approx(1 / 3, abs=0.03)
    assert fitted.bias == pytest.approx(-1 / 3, abs=0.1)


def test_temperature_of_uninformative_scores_is_the_base_rate():
    # Scores that fall as safety rises would need a negative slope, which would
    # reverse the ranking: the fit stops at slope 0, the base rate for all.
    rs = np.random.RandomState(3)
    safe = rs.rand(400) < 0.7
    score = np.where(safe, rs.uniform(0.0, 0.5, 400), rs.uniform(0.5, 1.0, 400))
    fitted = fit_temperature(score, safe)
    out = fitted([0.01, 0.5, 0.99])
    assert fitted.slope == 0.0
    assert out[0] == out[1] == out[2] == pytest.approx(safe.mean(), abs=0.01)


def test_temperature_on_separable_gold_stays_finite():
    fitted = fit_temperature([0.1, 0.2, 0.8, 0.9], [False, False, True, True])
    assert np.isfinite([fitted.slope, fitted.bias]).all()
    low, high = fitted([0.1, 0.9])
    assert 0 < low < 0.5 < high < 1


def test_isotonic_pools_violators_and_interpolates_between_blocks():
    fitted = fit_isotonic([0.1, 0.2, 0.3, 0.4], [False, True, False, True])
    assert fitted([0.1, 0.2, 0.3, 0.4]) == [0.0, 0.5, 0.5, 1.0]
    # Halfway between two blocks, halfway between their values; clipped outside.
    assert fitted([0.15, 0.0, 1.0]) == pytest.approx([0.25, 0.0, 1.0])


def test_isotonic_gives_tied_scores_one_value():
    fitted = fit_isotonic([0.2, 0.2, 0.2, 0.6], [True, False, False, True])
    assert fitted([0.2, 0.6]) == pytest.approx([1 / 3, 1.0])


def test_isotonic_output_never_decreases_with_the_score():
    rs = np.random.RandomState(4)
    score = rs.rand(2000)
    safe = rs.rand(2000) < 0.3 + 0.4 * score + 0.2 * np.sin(20 * score)  # wiggly
    fitted = fit_isotonic(score, safe)
    out = np.array(fitted(np.linspace(0, 1, 1001)))
    assert (np.diff(out) >= 0).all()
    assert out[-1] - out[0] > 0.3  # and it is not a flat line


@pytest.mark.parametrize("method", ["isotonic", "temperature"])
def test_json_round_trip_gives_identical_outputs(method):
    score, safe = miscalibrated(3000, seed=5)
    types = np.where(np.arange(3000) % 3 == 0, "date", "name").tolist()
    calibration = fit_calibration(score, safe, types, method=method)
    assert set(calibration.by_type) == {"date", "name"}
    stored = json.loads(json.dumps(calibration.to_json()))
    restored = Calibration.from_json(stored)
    probe = np.linspace(0, 1, 257)
    probe_types = ["date", "name", "other"] * 85 + ["date", "name"]
    assert restored(probe, probe_types) == calibration(probe, probe_types)
    assert restored.to_json() == calibration.to_json()
    one = calibrator_from_json(stored["overall"])
    assert one(probe) == calibration.overall(probe)


def test_small_types_fall_back_to_the_overall_calibrator():
    big_score, big_safe = miscalibrated(1000, seed=6, slope=3.0, bias=2.0)
    small_score, small_safe = miscalibrated(60, seed=7)
    one_sided = np.full(200, 0.9), np.ones(200, dtype=bool)  # 200 safe, 0 unsafe
    score = np.concatenate([big_score, small_score, one_sided[0]])
    safe = np.concatenate([big_safe, small_safe, one_sided[1]])
    types = ["big"] * 1000 + ["small"] * 60 + ["one_sided"] * 200
    calibration = fit_calibration(
        score, safe, types, method="temperature", min_per_type=50
    )
    assert set(calibration.by_type) == {"big"}
    probe = [0.3, 0.6, 0.9]
    overall = calibration.overall(probe)
    assert calibration(probe, ["small"] * 3) == overall
    assert calibration(probe, ["one_sided"] * 3) == overall
    assert calibration(probe, ["never_seen"] * 3) == overall
    assert calibration(probe, [None] * 3) == overall
    big = calibration(probe, ["big"] * 3)
    assert big == calibration.by_type["big"](probe) and big != overall
    # Rows are routed one by one, not by the first row's type.
    assert calibration(probe, ["big", "small", "big"]) == [big[0], overall[1], big[2]]


def test_claims_without_a_type_get_no_calibrator_of_their_own():
    score, safe = miscalibrated(1000, seed=13)
    calibration = fit_calibration(score, safe, [None] * 500 + ["name"] * 500)
    assert set(calibration.by_type) == {"name"}


def test_per_type_calibration_beats_the_pooled_one_when_types_differ():
    a_score, a_safe = miscalibrated(3000, seed=8, slope=3.0, bias=2.0)
    b_score, b_safe = miscalibrated(3000, seed=9, slope=0.5, bias=-1.0)
    score = np.concatenate([a_score, b_score])
    safe = np.concatenate([a_safe, b_safe])
    types = ["a"] * 3000 + ["b"] * 3000
    train = np.arange(6000) % 2 == 0
    test = ~train
    t_types = [t for t, keep in zip(types, train, strict=True) if keep]
    h_types = [t for t, keep in zip(types, test, strict=True) if keep]
    per_type = fit_calibration(score[train], safe[train], t_types)
    pooled = fit_calibration(score[train], safe[train])
    per_type_ece = expected_calibration_error(
        per_type(score[test], h_types), safe[test]
    )
    pooled_ece = expected_calibration_error(pooled(score[test]), safe[test])
    assert per_type_ece < pooled_ece


def test_reliability_diagram_rows_count_and_average_each_bin():
    rows = reliability_diagram(
        [0.05, 0.15, 0.15, 0.95, 1.0], [False, True, False, True, True], bins=10
    )
    assert len(rows) == 10
    assert rows[0] == {
        "lo": 0.0,
        "hi": 0.1,
        "count": 1,
        "mean_predicted": 0.05,
        "observed": 0.0,
    }
    assert rows[1]["count"] == 2 and rows[1]["observed"] == 0.5
    assert rows[5] == {
        "lo": 0.5,
        "hi": 0.6,
        "count": 0,
        "mean_predicted": None,
        "observed": None,
    }
    # 1.0 belongs to the last bin, which is closed on the right.
    assert rows[9]["count"] == 2
    assert rows[9]["mean_predicted"] == pytest.approx(0.975)
    json.dumps(rows)


def test_ece_is_the_count_weighted_gap():
    # Bin 0: predicted 0.05, observed 0 (gap .05, 1 claim); bin 1: .15 vs .5
    # (gap .35, 2 claims); bin 9: .975 vs 1 (gap .025, 2 claims).
    ece = expected_calibration_error(
        [0.05, 0.15, 0.15, 0.95, 1.0], [False, True, False, True, True]
    )
    assert ece == pytest.approx((0.05 + 2 * 0.35 + 2 * 0.025) / 5)
    assert expected_calibration_error([0.0, 1.0], [False, True]) == 0.0


def test_operating_point_flags_up_to_the_kth_unsafe_score():
    point = operating_point(
        [0.1, 0.2, 0.3, 0.4, 0.9], [True, False, True, False, False], target_recall=1.0
    )
    assert point.threshold == pytest.approx(0.35)
    assert (point.recall, point.precision) == (1.0, pytest.approx(2 / 3))
    assert (point.flagged_count, point.flagged_fraction) == (3, 0.6)
    assert (point.n, point.n_unsafe) == (5, 2)
    half = operating_point(
        [0.1, 0.2, 0.3, 0.4, 0.9], [True, False, True, False, False], target_recall=0.5
    )
    assert 0.1 < half.threshold <= 0.2 and half.flagged_count == 1


def test_operating_point_flags_tied_scores_together():
    point = operating_point([0.2, 0.2, 0.5], [True, False, False], target_recall=1.0)
    assert point.flagged_count == 2 and point.precision == 0.5


def test_operating_point_flags_all_when_the_last_unsafe_scores_highest():
    point = operating_point([0.2, 0.5, 0.7], [False, False, True], target_recall=1.0)
    assert point.threshold > 0.7 and point.flagged_count == 3


def test_operating_point_needs_no_more_unsafe_than_the_target():
    # 0.28 * 25 is 7.000000000000001 in floating point: still 7 unsafe, not 8.
    scores = np.arange(50) / 50
    unsafe = np.arange(50) % 2 == 0
    point = operating_point(scores, unsafe, target_recall=0.28)
    assert point.recall == 0.28 and point.flagged_count == 13


def test_operating_point_reaches_target_and_is_the_least_aggressive():
    score, safe = miscalibrated(4000, seed=10)
    probs = fit_calibration(score, safe)(score)
    unsafe = ~safe
    point = operating_point(probs, unsafe, target_recall=0.95)
    flagged = flags_at(probs, point.threshold)
    assert point.recall >= 0.95
    assert point.recall == (flagged & unsafe).sum() / unsafe.sum()
    assert point.flagged_count == flagged.sum()
    assert point.precision == (flagged & unsafe).sum() / flagged.sum()
    # Unflagging the highest flagged score (with its ties) misses the target.
    top = np.max(np.asarray(probs)[flagged])
    fewer = flagged & (np.asarray(probs) < top)
    assert (fewer & unsafe).sum() / unsafe.sum() < 0.95


def test_operating_point_recall_holds_on_held_out_claims():
    score, safe = miscalibrated(40000, seed=11)
    calibration = fit_calibration(score[:20000], safe[:20000])
    point = operating_point(
        calibration(score[:20000]), ~safe[:20000], target_recall=0.95
    )
    held_flags = flags_at(calibration(score[20000:]), point.threshold)
    held_unsafe = ~safe[20000:]
    recall = (held_flags & held_unsafe).sum() / held_unsafe.sum()
    assert recall == pytest.approx(0.95, abs=0.015)
    workload = held_flags.mean()
    assert workload == pytest.approx(point.flagged_fraction, abs=0.02)


def test_raw_and_calibrated_scores_give_the_same_flags():
    # Both calibrations are monotone, so the choice of scale moves the
    # threshold, not which claims are flagged.
    score, safe = miscalibrated(3000, seed=12)
    temperature = fit_calibration(score, safe, method="temperature")
    raw = operating_point(score, ~safe, target_recall=0.9)
    calibrated = operating_point(temperature(score), ~safe, target_recall=0.9)
    assert raw.flagged_count == calibrated.flagged_count
    assert raw.threshold != calibrated.threshold


@pytest.mark.parametrize(
    "scores, labels, target, message",
    [
        ([], [], 0.9, "scores is empty"),
        ([0.1, 0.2], [True], 0.9, "1 labels for 2 scores"),
        ([0.1, float("nan")], [True, False], 0.9, "NaN"),
        ([0.1, 0.2], [True, False], 0.0, r"target_recall must be in \(0, 1\]"),
        ([0.1, 0.2], [True, False], 1.5, r"target_recall must be in \(0, 1\]"),
        ([0.1, 0.2], [False, False], 0.9, "no unsafe"),
        ([0.1, 0.2], ["unsafe", "safe"], 0.9, "booleans"),
    ],
)
def test_operating_point_rejects_bad_input(scores, labels, target, message):
    with pytest.raises(ValueError, match=message):
        operating_point(scores, labels, target_recall=target)


@pytest.mark.parametrize(
    "scores, labels, kwargs, message",
    [
        ([], [], {}, "scores is empty"),
        ([0.1, 0.9], [True], {}, "1 labels for 2 scores"),
        ([0.1, float("nan")], [False, True], {}, "NaN"),
        ([0.1, 1.2], [False, True], {}, r"in \[0, 1\]"),
        ([0.1, 0.9], [True, True], {}, "both classes"),
        ([0.1, 0.9], [False, True], {"method": "platt"}, "method must be one of"),
        ([0.1, 0.9], [False, True], {"min_per_type": 0}, "min_per_type"),
        ([0.1, 0.9], [False, True], {"types": ["a"]}, "1 entries for 2 scores"),
    ],
)
def test_fit_calibration_rejects_bad_input(scores, labels, kwargs, message):
    with pytest.raises(ValueError, match=message):
        fit_calibration(scores, labels, **kwargs)


def test_diagram_and_ece_reject_bad_input():
    with pytest.raises(ValueError, match="bins must be at least 1"):
        reliability_diagram([0.5], [True], bins=0)
    with pytest.raises(ValueError, match="probs is empty"):
        expected_calibration_error([], [])
    with pytest.raises(ValueError, match="NaN"):
        expected_calibration_error([float("nan")], [True])
    with pytest.raises(ValueError, match="2 labels for 1 scores"):
        reliability_diagram([0.5], [True, False])


def test_applying_rejects_bad_input():
    calibration = Calibration("temperature", TemperatureCalibrator(1.0, 0.0))
    with pytest.raises(ValueError, match="1 entries for 2 scores"):
        calibration([0.1, 0.2], ["a"])
    with pytest.raises(ValueError, match="NaN"):
        calibration([float("nan")])
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        calibration([2.0])


def test_malformed_json_is_a_value_error():
    with pytest.raises(ValueError, match="unknown calibration method 'platt'"):
        calibrator_from_json({"method": "platt"})
    with pytest.raises(ValueError, match="malformed temperature"):
        calibrator_from_json({"method": "temperature", "slope": 1.0})
    with pytest.raises(ValueError, match="non-decreasing"):
        calibrator_from_json({"method": "isotonic", "x": [0.1, 0.2], "y": [0.9, 0.1]})
    with pytest.raises(ValueError, match="malformed calibration"):
        Calibration.from_json({"method": "isotonic"})
    assert isinstance(
        calibrator_from_json({"method": "isotonic", "x": [0.5], "y": [0.3]}),
        IsotonicCalibrator,
    )


def test_confident_recall_aims_above_the_target_and_holds_on_new_claims():
    from pipeline.calibration import confident_recall

    assert confident_recall(0.95, 179, confidence=0.5) == pytest.approx(
        math.ceil(0.95 * 179) / 179
    )
    aimed = confident_recall(0.95, 179)
    assert 0.96 < aimed < 1.0
    assert confident_recall(0.95, 10) == 1.0  # too few to be sure of anything
    # On held-out halves of one population, the recall aimed at this way
    # falls short of the target far less often than the plain target does.
    rs = np.random.RandomState(7)
    short = {"plain": 0, "confident": 0}
    for _ in range(200):
        unsafe_scores = rs.beta(1.0, 4.0, size=400)
        fit, test = unsafe_scores[:200], unsafe_scores[200:]
        labels = [True] * 200
        for name, target in (
            ("plain", 0.95),
            ("confident", confident_recall(0.95, 200)),
        ):
            threshold = operating_point(fit, labels, target_recall=target).threshold
            short[name] += (test < threshold).mean() < 0.95
    assert short["confident"] <= 0.1 * 200 < short["plain"]
    with pytest.raises(ValueError, match="target_recall"):
        confident_recall(0.0, 10)
    with pytest.raises(ValueError, match="n_unsafe"):
        confident_recall(0.9, 0)
    with pytest.raises(ValueError, match="confidence"):
        confident_recall(0.9, 10, confidence=1.0)

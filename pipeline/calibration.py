"""Calibration of a scorer on the gold set, and the operating point it implies.

A scorer's ``p(supports)`` ranks claims well but is rarely a probability: a
fine-tuned cross-encoder is overconfident and its base rate is the silver
set's, not the gold set's. Here a monotone map fitted on gold labels turns a
raw score into a calibrated probability that the claim is safe, and the admin
picks the threshold by the share of hallucinations to flag rather than by a
number on an arbitrary scale. Direction as in :mod:`pipeline.score`: a claim
is flagged when its score (raw or calibrated) is *below* the threshold.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: Gold labels of *each* class a type needs for a calibrator of its own. With
#: 50 a rate near 0.5 is known to about +-7 points (sqrt(.25 / 50)), the width
#: of one bin of a 10-bin reliability diagram; fewer and a per-type isotonic
#: fit mostly learns noise, which the pooled fit already averages away.
DEFAULT_MIN_PER_TYPE = 50
METHODS = ("isotonic", "temperature")
#: Raw scores are clipped this far inside (0, 1) so their logit is finite.
_EPS = 1e-6
#: Scores or labels as given: a sequence or a numpy array.
Values = Sequence[float] | np.ndarray


def _scores(values: Values, name: str) -> np.ndarray:
    array = np.asarray(values, dtype=float).reshape(-1)
    if not array.size:
        raise ValueError(f"{name} is empty")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} holds NaN or infinite values")
    return array


def _probabilities(values: Values, name: str) -> np.ndarray:
    array = _scores(values, name)
    if array.min() < 0.0 or array.max() > 1.0:
        raise ValueError(f"{name} must lie in [0, 1]")
    return array


def _labels(values: Sequence[bool] | np.ndarray, n: int, name: str) -> np.ndarray:
    array = np.asarray(values).reshape(-1)
    if array.size != n:
        raise ValueError(f"{name} has {array.size} labels for {n} scores")
    if not np.isin(array, [0, 1]).all():
        raise ValueError(f"{name} must be booleans (or 0 / 1)")
    return array.astype(bool)


def _both_classes(safe: np.ndarray) -> None:
    if safe.all() or not safe.any():
        raise ValueError("calibration needs gold labels of both classes")


@dataclass(frozen=True)
class TemperatureCalibrator:
    """``sigmoid(slope * logit(score) + bias)``: Platt scaling on the logit.

    ``slope`` is the inverse temperature. The bias is kept because the gold
    set's share of safe claims differs from that of the pairs the scorer was
    trained on, and a temperature alone cannot move the point where the score
    means 0.5. ``slope >= 0`` always, so the map never reverses the
    scorer's ranking; 0 means the scores carry no information on this data and
    every claim gets the base rate.
    """

    slope: float
    bias: float

    method = "temperature"

    def apply(self, scores: Sequence[float]) -> list[float]:
        """Calibrated P(safe) for each raw score in [0, 1]."""
        x = _logit(_probabilities(scores, "scores"))
        return _sigmoid(self.slope * x + self.bias).tolist()

    __call__ = apply

    def to_json(self) -> dict[str, Any]:
        return {"method": self.method, "slope": self.slope, "bias": self.bias}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TemperatureCalibrator:
        return cls(slope=float(data["slope"]), bias=float(data["bias"]))


@dataclass(frozen=True)
class IsotonicCalibrator:
    """A non-decreasing piecewise-linear map through ``(x[i], y[i])``.

    The knots are the ends of the pool-adjacent-violators blocks: flat within
    a block, linear between blocks (so unseen scores between two blocks do not
    jump), and clipped to the end values outside the fitted range.
    """

    x: tuple[float, ...]
    y: tuple[float, ...]

    method = "isotonic"

    def __post_init__(self) -> None:
        if not self.x or len(self.x) != len(self.y):
            raise ValueError("isotonic knots need equal, non-zero numbers of x and y")
        if np.any(np.diff(self.x) < 0) or np.any(np.diff(self.y) < 0):
            raise ValueError("isotonic knots must be non-decreasing in x and y")

    def apply(self, scores: Sequence[float]) -> list[float]:
        """Calibrated P(safe) for each raw score."""
        return np.interp(_scores(scores, "scores"), self.x, self.y).tolist()

    __call__ = apply

    def to_json(self) -> dict[str, Any]:
        return {"method": self.method, "x": list(self.x), "y": list(self.y)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> IsotonicCalibrator:
        return cls(
            x=tuple(float(v) for v in data["x"]), y=tuple(float(v) for v in data["y"])
        )


Calibrator = TemperatureCalibrator | IsotonicCalibrator


def calibrator_from_json(data: Mapping[str, Any]) -> Calibrator:
    """The calibrator a ``to_json()`` dict describes.

    Raises:
        ValueError: an unknown ``method`` or missing / malformed fields.
    """
    kinds: dict[object, type[TemperatureCalibrator] | type[IsotonicCalibrator]] = {
        "temperature": TemperatureCalibrator,
        "isotonic": IsotonicCalibrator,
    }
    kind = kinds.get(data.get("method"))
    if kind is None:
        raise ValueError(f"unknown calibration method {data.get('method')!r}")
    try:
        return kind.from_json(data)
    except (KeyError, TypeError) as e:
        raise ValueError(f"malformed {data['method']} calibrator: {e!r}") from e


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, _EPS, 1 - _EPS)
    return np.log(p) - np.log1p(-p)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1 + np.tanh(0.5 * z))  # no overflow for large |z|


def fit_temperature(
    scores: Values, safe_labels: Sequence[bool] | np.ndarray
) -> TemperatureCalibrator:
    """Fit slope and bias by maximum likelihood (Newton's method).

    Targets are Platt's smoothed ``(n_safe + 1) / (n_safe + 2)`` and
    ``1 / (n_unsafe + 2)`` rather than 1 and 0, so perfectly separated gold
    data gives a finite, not infinitely confident, fit.

    Raises:
        ValueError: empty or mismatched input, NaN or scores outside [0, 1],
            or labels of one class only.
    """
    x = _logit(_probabilities(scores, "scores"))
    safe = _labels(safe_labels, x.size, "safe_labels")
    _both_classes(safe)
    n_safe = int(safe.sum())
    t = np.where(safe, (n_safe + 1) / (n_safe + 2), 1 / (x.size - n_safe + 2))
    design = np.column_stack([x, np.ones_like(x)])

    def loss(w: np.ndarray) -> float:
        z = design @ w
        # -log-likelihood of targets t: log(1 + e^z) - t z, stably.
        return float(np.sum(np.logaddexp(0, z) - t * z))

    w = np.array([1.0, 0.0])
    for _ in range(100):
        p = _sigmoid(design @ w)
        gradient = design.T @ (p - t)
        hessian = (design * (p * (1 - p))[:, None]).T @ design + 1e-9 * np.eye(2)
        step = np.linalg.solve(hessian, gradient)
        size, current = 1.0, loss(w)
        while loss(w - size * step) > current and size > 1e-8:
            size /= 2  # backtrack: Newton can overshoot far from the optimum
        w = w - size * step
        if np.abs(size * step).max() < 1e-10:
            break
    if w[0] <= 0:
        # The likelihood is concave, so with the slope held at 0 its optimum
        # is the (smoothed) base rate.
        return TemperatureCalibrator(slope=0.0, bias=float(_logit(t.mean())))
    return TemperatureCalibrator(slope=float(w[0]), bias=float(w[1]))


def fit_isotonic(
    scores: Values, safe_labels: Sequence[bool] | np.ndarray
) -> IsotonicCalibrator:
    """Fit the non-decreasing map closest (least squares) to the labels.

    Pool-adjacent-violators over the distinct scores, each weighted by how
    many claims share it, so tied scores always get one calibrated value.

    Raises:
        ValueError: empty or mismatched input, NaN or scores outside [0, 1],
            or labels of one class only.
    """
    raw = _probabilities(scores, "scores")
    safe = _labels(safe_labels, raw.size, "safe_labels")
    _both_classes(safe)
    xs, inverse, counts = np.unique(raw, return_inverse=True, return_counts=True)
    means = np.bincount(inverse, weights=safe.astype(float)) / counts
    # Blocks as [value, weight, first index, last index]; merge while the
    # last two are out of order (or equal: fewer knots, the same map).
    blocks: list[list[float]] = []
    for i, (mean, weight) in enumerate(zip(means, counts, strict=True)):
        blocks.append([float(mean), float(weight), i, i])
        while len(blocks) > 1 and blocks[-2][0] >= blocks[-1][0]:
            value, weight_b, _, last = blocks.pop()
            a = blocks[-1]
            total = a[1] + weight_b
            a[0] = (a[0] * a[1] + value * weight_b) / total
            a[1], a[3] = total, last
    knots: list[tuple[float, float]] = []
    for value, _, first, last in blocks:
        knots.append((float(xs[int(first)]), value))
        if last != first:
            knots.append((float(xs[int(last)]), value))
    return IsotonicCalibrator(
        x=tuple(k[0] for k in knots), y=tuple(k[1] for k in knots)
    )


def _group(types: Sequence[str | None], n: int) -> dict[str | None, np.ndarray]:
    """The row indices of each type."""
    if len(types) != n:
        raise ValueError(f"types has {len(types)} entries for {n} scores")
    groups: dict[str | None, list[int]] = {}
    for i, t in enumerate(types):
        groups.setdefault(t, []).append(i)
    return {t: np.array(rows) for t, rows in groups.items()}


_FITTERS: dict[str, Callable[[Values, np.ndarray], Calibrator]] = {
    "isotonic": fit_isotonic,
    "temperature": fit_temperature,
}


@dataclass(frozen=True)
class Calibration:
    """A calibrator for all claims, and one per type that has enough gold.

    Types without their own calibrator (too few labels, or never seen) use
    ``overall``.
    """

    method: str
    overall: Calibrator
    by_type: Mapping[str, Calibrator] = field(default_factory=dict)
    min_per_type: int = DEFAULT_MIN_PER_TYPE

    def apply(
        self, scores: Sequence[float], types: Sequence[str | None] | None = None
    ) -> list[float]:
        """Calibrated P(safe) per score, by the calibrator of its type.

        Raises:
            ValueError: bad scores, or ``types`` of another length.
        """
        if types is None:
            return self.overall.apply(scores)
        raw = _scores(scores, "scores")
        out = np.empty(raw.size)
        for key, rows in _group(types, raw.size).items():
            calibrator = (
                self.overall if key is None else self.by_type.get(key, self.overall)
            )
            out[rows] = calibrator.apply(raw[rows])
        return out.tolist()

    __call__ = apply

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "min_per_type": self.min_per_type,
            "overall": self.overall.to_json(),
            "by_type": {t: c.to_json() for t, c in sorted(self.by_type.items())},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Calibration:
        """The calibration a ``to_json()`` dict describes.

        Raises:
            ValueError: the dict is missing a field or names an unknown method.
        """
        try:
            return cls(
                method=str(data["method"]),
                overall=calibrator_from_json(data["overall"]),
                by_type={
                    str(t): calibrator_from_json(c)
                    for t, c in data.get("by_type", {}).items()
                },
                min_per_type=int(data.get("min_per_type", DEFAULT_MIN_PER_TYPE)),
            )
        except (KeyError, TypeError, AttributeError) as e:
            raise ValueError(f"malformed calibration: {e!r}") from e


def fit_calibration(
    scores: Sequence[float],
    safe_labels: Sequence[bool],
    types: Sequence[str | None] | None = None,
    *,
    method: str = "isotonic",
    min_per_type: int = DEFAULT_MIN_PER_TYPE,
) -> Calibration:
    """Fit the active scorer's calibration on gold labels.

    Args:
        scores: the scorer's raw ``p(supports)`` per gold claim, in [0, 1].
        safe_labels: True where the gold label is safe.
        types: each claim's type (entity type, checker...), or None; a type
            gets a calibrator of its own with ``min_per_type`` gold labels of
            each class, else it uses the overall one.
        method: ``"isotonic"`` (no shape assumed, needs more data) or
            ``"temperature"`` (two parameters, smooth, safe on little data).
        min_per_type: see :data:`DEFAULT_MIN_PER_TYPE`.

    Returns:
        A :class:`Calibration`; ``to_json()`` it to store it beside the scorer.

    Raises:
        ValueError: an unknown method, ``min_per_type < 1``, empty or
            mismatched input, NaN or out-of-range scores, one class only.
    """
    fitter = _FITTERS.get(method)
    if fitter is None:
        raise ValueError(f"method must be one of {METHODS}, not {method!r}")
    if min_per_type < 1:
        raise ValueError("min_per_type must be at least 1")
    raw = _probabilities(scores, "scores")
    safe = _labels(safe_labels, raw.size, "safe_labels")
    overall = fitter(raw, safe)
    by_type: dict[str, Calibrator] = {}
    if types is not None:
        for key, rows in _group(types, raw.size).items():
            n_safe = int(safe[rows].sum())
            if key is not None and min(n_safe, rows.size - n_safe) >= min_per_type:
                by_type[key] = fitter(raw[rows], safe[rows])
    return Calibration(method, overall, by_type, min_per_type)


def reliability_diagram(
    probs: Sequence[float], safe_labels: Sequence[bool], *, bins: int = 10
) -> list[dict[str, Any]]:
    """Predicted against observed P(safe) in equal-width bins of [0, 1].

    Returns:
        One JSON-ready row per bin, empty bins included so a chart's axis
        stays put: ``{"lo", "hi", "count", "mean_predicted", "observed"}``,
        the last two None when ``count`` is 0. Bins are ``[lo, hi)``, the last
        one ``[lo, 1]``.

    Raises:
        ValueError: ``bins < 1``, empty or mismatched input, NaN or
            probabilities outside [0, 1].
    """
    if bins < 1:
        raise ValueError("bins must be at least 1")
    p = _probabilities(probs, "probs")
    safe = _labels(safe_labels, p.size, "safe_labels")
    index = np.minimum((p * bins).astype(int), bins - 1)
    rows = []
    for b in range(bins):
        members = index == b
        count = int(members.sum())
        rows.append(
            {
                "lo": b / bins,
                "hi": (b + 1) / bins,
                "count": count,
                "mean_predicted": float(p[members].mean()) if count else None,
                "observed": float(safe[members].mean()) if count else None,
            }
        )
    return rows


def expected_calibration_error(
    probs: Sequence[float], safe_labels: Sequence[bool], *, bins: int = 10
) -> float:
    """The count-weighted mean gap between predicted and observed P(safe)
    over the bins of :func:`reliability_diagram` (0 is perfect).

    Raises:
        ValueError: as :func:`reliability_diagram`.
    """
    rows = reliability_diagram(probs, safe_labels, bins=bins)
    n = sum(r["count"] for r in rows)
    return sum(
        r["count"] / n * abs(r["mean_predicted"] - r["observed"])
        for r in rows
        if r["count"]
    )


@dataclass(frozen=True)
class OperatingPoint:
    """A threshold and what it costs on the data it was chosen on.

    ``flagged_fraction`` is the expert workload: the share of claims flagged
    for an expert to look at.
    """

    threshold: float
    target_recall: float
    recall: float
    precision: float
    flagged_count: int
    flagged_fraction: float
    n: int
    n_unsafe: int


def operating_point(
    scores: Sequence[float], unsafe_labels: Sequence[bool], *, target_recall: float
) -> OperatingPoint:
    """The least aggressive threshold that flags ``target_recall`` of unsafe.

    A claim is flagged when its score is below the threshold. The score may
    be raw or calibrated: temperature scaling keeps the order, so it gives the
    same flags; isotonic ties the scores of a block, so on its scale the flags
    move in coarser steps. The fewest flags that
    reach the target take every claim scored at or below the k-th lowest
    unsafe score, k = ceil(target * n_unsafe), ties included. Any threshold
    above that score and up to the next one gives those flags; the midpoint is
    returned so a small change in a score (another device, rounding in
    storage) does not change a flag.

    Args:
        scores: one score per gold claim, higher meaning more likely safe.
        unsafe_labels: True where the gold label is unsafe.
        target_recall: the share of unsafe claims to flag, in (0, 1].

    Returns:
        An :class:`OperatingPoint` measured on ``scores``; on new claims the
        recall is near the target only as far as they resemble these.

    Raises:
        ValueError: empty or mismatched input, NaN scores, a target outside
            (0, 1], or no unsafe label (recall is undefined).
    """
    if not 0 < target_recall <= 1:
        raise ValueError(f"target_recall must be in (0, 1], not {target_recall}")
    s = _scores(scores, "scores")
    unsafe = _labels(unsafe_labels, s.size, "unsafe_labels")
    n_unsafe = int(unsafe.sum())
    if not n_unsafe:
        raise ValueError("unsafe_labels has no unsafe claim: recall is undefined")
    # The tolerance keeps e.g. 0.28 * 25 == 7.000000000000001 from needing 8.
    k = min(n_unsafe, max(1, math.ceil(target_recall * n_unsafe - 1e-9)))
    cut = np.sort(s[unsafe])[k - 1]
    above = s[s > cut]
    threshold = (
        float((cut + above.min()) / 2)
        if above.size
        else float(np.nextafter(cut, np.inf))
    )
    flagged = s < threshold
    hits = int((flagged & unsafe).sum())
    count = int(flagged.sum())
    return OperatingPoint(
        threshold=threshold,
        target_recall=float(target_recall),
        recall=hits / n_unsafe,
        precision=hits / count,
        flagged_count=count,
        flagged_fraction=count / s.size,
        n=int(s.size),
        n_unsafe=n_unsafe,
    )


def confident_recall(
    target_recall: float, n_unsafe: int, *, confidence: float = 0.95
) -> float:
    """The recall to reach on ``n_unsafe`` gold claims so that the recall on
    new claims like them is at least ``target_recall`` with ``confidence``.

    A threshold that flags exactly 95% of the gold set's hallucinations
    flags fewer than 95% of the next ones about half the time: the gold
    recall is an estimate. This aims higher, at the least ``k / n_unsafe``
    whose one-sided Wilson lower bound reaches the target; pass it to
    :func:`operating_point` as its ``target_recall``. With too few unsafe
    labels even flagging all of them does not reach the bound, and 1.0 is
    returned (the best the gold set can do).

    Args:
        target_recall: in (0, 1].
        n_unsafe: unsafe gold claims the threshold is chosen on (>= 1).
        confidence: in [0.5, 1); 0.5 aims at the target itself.

    Raises:
        ValueError: a target outside (0, 1], ``n_unsafe < 1`` or a
            confidence outside [0.5, 1).
    """
    from statistics import NormalDist

    if not 0 < target_recall <= 1:
        raise ValueError(f"target_recall must be in (0, 1], not {target_recall}")
    if n_unsafe < 1:
        raise ValueError("n_unsafe must be at least 1")
    if not 0.5 <= confidence < 1:
        raise ValueError(f"confidence must be in [0.5, 1), not {confidence}")
    z = NormalDist().inv_cdf(confidence)
    n = n_unsafe

    def lower_bound(k: int) -> float:
        p = k / n
        centre = p + z * z / (2 * n)
        spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
        return (centre - spread) / (1 + z * z / n)

    first = min(n, max(1, math.ceil(target_recall * n - 1e-9)))
    for k in range(first, n + 1):
        if lower_bound(k) >= target_recall - 1e-12:
            return k / n
    return 1.0

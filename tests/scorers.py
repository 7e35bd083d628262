"""A scorer for tests that need verdicts they can predict."""

import re

_WORD = re.compile(r"\w+")


class WordOverlapScorer:
    """A ``pipeline.score.Scorer`` whose p(supported) is the share of the
    hypothesis's words found in the premise; it keeps the pairs it read."""

    name = "overlap"

    def __init__(self, *, threshold: float = 0.9):
        self.threshold = threshold
        self.pairs = []

    def score_pairs(self, pairs, *, progress=False):
        self.pairs += pairs
        out = []
        for premise, hypothesis in pairs:
            words = set(_WORD.findall(hypothesis.lower()))
            found = words & set(_WORD.findall(premise.lower()))
            out.append(len(found) / len(words) if words else 0.0)
        return out

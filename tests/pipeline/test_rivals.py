"""Rival values: what competes with a claim for its evidence, and the check
that flags a claim a rival outscores by the scorer's margin (issue 28)."""

from pipeline.checkers.extraction.check import check_claims
from pipeline.checkers.extraction.rivals import rival_hypotheses
from pipeline.evaluate import rival_margin
from pipeline.types import Claim, Document

CAPTION = (
    "JANE ROE, Appellant, v. JOHN DOE, Appellee. "
    "Argued March 2, 2001. Decided May 7, 2001."
)


def claim(pid, type_name, value, context=CAPTION):
    return Claim(pid, "d1", type_name, value, context)


def test_rivals_are_the_counter_role_the_other_dates_and_the_other_values_named():
    roe = claim("p1", "Appellee", "Jane Roe")
    doe = claim("p2", "Appellant", "John Doe")
    far = claim("p3", "Appellee", "Richard Poe")  # not in this span
    same = claim("p4", "Appellee", "JANE ROE")  # the claim's own value
    assert rival_hypotheses(roe, CAPTION, [roe, doe, far, same]) == [
        "Appellant: Jane Roe",
        "Appellee: John Doe",
    ]
    decided = claim("p5", "Decision Date", {"yyyy": "2001", "mm": "05", "dd": "07"})
    assert rival_hypotheses(decided, CAPTION, [decided]) == [
        "Decision Date: 2001-03-02"
    ]
    assert rival_hypotheses(claim("p6", "Court", "Ninth Circuit"), CAPTION, []) == []


class TableScorer:
    """Scores each hypothesis as its table says (the rule under test reads
    only the scores), with a rival margin."""

    threshold = 0.5

    def __init__(self, table, rival_margin):
        self.table, self.rival_margin = table, rival_margin

    def score_pairs(self, pairs, *, progress=False):
        self.asked = [h for _, h in pairs]
        return [self.table[h] for _, h in pairs]


def test_a_claim_its_rival_outscores_by_the_margin_is_flagged():
    # Running text no pattern reads: only the scorer can tell the roles.
    text = "Before us is the appeal Jane Roe brought from the order for John Doe."
    documents = {"d1": Document("d1", text)}
    swapped = claim("p1", "Appellee", "Jane Roe", text)
    right = claim("p2", "Appellant", "Jane Roe", text)
    table = {
        "Appellee: Jane Roe": 0.7,
        "Appellant: Jane Roe": 0.95,
    }
    verdicts = {
        margin: {
            c.claim.id: c.verdict
            for c in check_claims(
                documents, [swapped, right], scorer=TableScorer(table, margin)
            ).checked
        }
        for margin in (None, 0.2, 0.3)
    }
    assert verdicts[None] == {"p1": "safe", "p2": "safe"}  # rivals unread
    assert verdicts[0.2] == {"p1": "unsafe", "p2": "safe"}
    assert verdicts[0.3] == {"p1": "safe", "p2": "safe"}  # 0.25 is within it


def test_a_claim_its_span_states_is_scored_without_its_rivals():
    """The caption states the roles, so its verdict needs no rival: only its
    own score is asked for (the queue orders by it)."""
    documents = {"d1": Document("d1", CAPTION)}
    stated = claim("p1", "Appellant", "Jane Roe")
    scorer = TableScorer({"Appellant: Jane Roe": 0.9}, 0.1)
    (checked,) = check_claims(documents, [stated], scorer=scorer).checked
    assert (checked.verdict, checked.score) == ("safe", 0.9)
    assert scorer.asked == ["Appellant: Jane Roe"]


def test_the_margin_is_the_narrowest_whose_own_flags_are_precise():
    scores = [0.9, 0.8, 0.8, 0.86]
    rivals = [0.2, 0.87, 1.0, 0.98]
    unsafe = [False, False, True, True]
    # 0.1 flags items 2 and 3 (both unsafe); 0.05 adds item 1 (safe).
    assert rival_margin(scores, rivals, unsafe, threshold=0.5, target=0.9) == 0.1
    assert (
        rival_margin(
            scores, rivals, [True, True, False, False], threshold=0.5, target=0.9
        )
        is None
    )

"""Fields found by pattern in raw decisions, and the silver pairs they make."""

import random

from pipeline.checkers.extraction.patterns import find_dates, pattern_fields
from pipeline.checkers.extraction.silver import counter_role, date_text, silver_examples
from pipeline.types import Document

STATE_APPEAL = """153 Conn.App. 266

STATE of Connecticut
v.
Walter PRYCE.

No. 35012.

Appellate Court of Connecticut.

Argued May 19, 2014.
Decided Sept. 30, 2014.

Mary Ellen Haskell, assigned counsel, for the appellant (defendant).

Laura Fulton, assistant state's attorney, for the appellee (state).

HALLORAN, MARSH and QUINTERO, Js.

Opinion

MARSH, J.

The defendant appeals from the judgment of conviction rendered on 12/03/2012.
"""

SUPREME_COURT = """SUPREME COURT OF THE UNITED STATES _________________

No. 10–4471 _________________

OSCAR DELGADO, PETITIONER v. HARBOR FREIGHT LINES ON WRIT OF CERTIORARI TO THE
UNITED STATES COURT OF APPEALS FOR THE NINTH CIRCUIT

[March 6, 2012]

JUSTICE OKAFOR delivered the opinion of the Court. The question is narrow.
"""


def found(text):
    return {(p.type, str(p.value)) for p, _ in pattern_fields(Document("d", text))}


def test_a_state_appeal_gives_its_dates_court_docket_judges_and_counsel():
    fields = found(STATE_APPEAL)
    assert ("Argument Date", str({"yyyy": "2014", "mm": "05", "dd": "19"})) in fields
    assert ("Decision Date", str({"yyyy": "2014", "mm": "09", "dd": "30"})) in fields
    assert ("Date", str({"yyyy": "2012", "mm": "12", "dd": "03"})) in fields
    assert ("Court", "Appellate Court of Connecticut") in fields
    assert ("Docket Number", "35012") in fields
    assert ("Counsel for Appellant", "Mary Ellen Haskell") in fields
    assert ("Counsel for Appellee", "Laura Fulton") in fields
    author = str({"first_name": None, "last_name": "Marsh"})
    assert ("Author Judge", author) in fields
    panel = {v for t, v in fields if t == "Panel Judge"}
    assert panel == {
        str({"first_name": None, "last_name": name})
        for name in ("Halloran", "Marsh", "Quintero")
    }


def test_a_caption_gives_both_parties_with_their_roles():
    fields = found(SUPREME_COURT)
    assert ("Petitioner", "Oscar Delgado") in fields
    assert ("Respondent", "Harbor Freight Lines") in fields
    assert ("Decision Date", str({"yyyy": "2012", "mm": "03", "dd": "06"})) in fields
    assert ("Author Judge", str({"first_name": None, "last_name": "Okafor"})) in fields
    assert ("Court", "Supreme Court Of The United States") in fields


def test_each_field_is_aligned_to_its_line_and_at_most_one_neighbour():
    document = Document("d", STATE_APPEAL)
    fields = pattern_fields(document)
    for p, a in fields:
        assert a.text == STATE_APPEAL[a.start : a.end] == p.context
        assert a.text == a.text.strip() and len(a.text) <= 300
        assert len([line for line in a.text.splitlines() if line.strip()]) <= 2
    assert any("\n" in a.text for _, a in fields)
    assert any("\n" not in a.text for _, a in fields)


def test_dates_are_read_in_every_common_format():
    text = "on 4 July 2019, July 5, 2019, Jul. 6, 2019, 2019-07-07 and 07/08/2019"
    days = [value["dd"] for _, _, value in find_dates(text)]
    assert sorted(days) == ["04", "05", "06", "07", "08"]
    assert not list(find_dates("page 12/45 and 31/31/2020"))


def test_roles_swap_with_their_counterpart():
    assert counter_role("Appellant") == "Appellee"
    assert counter_role("Counsel for Respondent") == "Counsel for Petitioner"
    assert counter_role("PLAINTIFF") == "DEFENDANT"
    assert counter_role("Decision Date") is None
    rng = random.Random(0)
    formats = {
        date_text({"yyyy": "2014", "mm": "09", "dd": "30"}, rng) for _ in range(60)
    }
    assert {"2014-09-30", "September 30, 2014", "30 September 2014"} <= formats


def test_silver_pairs_of_decisions_include_the_hard_negatives():
    documents = [Document("a", STATE_APPEAL), Document("b", SUPREME_COURT)]
    pool = [pair for d in documents for pair in pattern_fields(d)]
    examples = silver_examples(pool, negatives_per_positive=3, seed=0)
    negatives = {(e.source, e.hypothesis.lower()) for e in examples if not e.supported}
    sources = {source for source, _ in negatives}
    assert {"silver:swap_in_span", "silver:swap_role"} <= sources
    # The other party under the petitioner's role, on the caption's own line.
    swapped = [
        e
        for e in examples
        if not e.supported
        and e.source in ("silver:swap_in_span", "silver:swap_role")
        and "PETITIONER v. HARBOR" in e.premise
    ]
    assert swapped, negatives
    positives = [e for e in examples if e.supported]
    assert all(e.source == "silver:copy" for e in positives)


def test_a_date_the_span_contradicts_is_unsafe_whatever_the_format():
    from pipeline.checkers.extraction import ExtractionChecker
    from pipeline.checkers.extraction.patterns import date_contradicted

    argued = "Argued Oct. 19, 1953."
    assert date_contradicted(argued, {"yyyy": "1953", "mm": "11", "dd": "19"})
    assert not date_contradicted(argued, {"yyyy": "1953", "mm": "10", "dd": "19"})
    assert not date_contradicted(argued, "October 19, 1953")
    assert not date_contradicted(argued, {"yyyy": "1953", "mm": "10"})
    assert date_contradicted(argued, {"yyyy": "1954"})
    # Day and month in either order where digits say so; no date, no verdict.
    assert not date_contradicted(
        "on 06/11/1953", {"yyyy": "1953", "mm": "11", "dd": "6"}
    )
    assert not date_contradicted("no date here", {"yyyy": "1953", "mm": "11"})
    assert not date_contradicted(argued, "Toronto")

    document = Document("d", STATE_APPEAL)
    checker = ExtractionChecker({"d": document})
    claims = [
        checker.claim_from_json(
            {
                "id": i,
                "document_id": "d",
                "type": "Decision Date",
                "value": value,
                "context": "Decided Sept. 30, 2014.",
            }
        )
        for i, value in (("right", "2014-09-30"), ("wrong", "2014-09-03"))
    ]
    right, wrong = checker.check(claims).findings
    assert right.verdict == "unscored"  # no scorer: a found date proves nothing more
    assert (wrong.verdict, wrong.reason) == ("unsafe", "not_supported")


def test_a_span_that_states_the_field_settles_the_claim():
    from pipeline.checkers.extraction.agreement import field_kind, pattern_agreement

    assert field_kind("Date of Decision") == "Decision Date"
    assert field_kind("appellant_name") == "Appellant"
    assert field_kind("Counsel for Respondent") == "Counsel for Respondent"
    assert field_kind("AuthorJudge") == "Author Judge"
    assert field_kind("Outcome") is None

    caption = "KENTUCKY, PETITIONER v. HOLLIS DESHAUN KING ON WRIT OF CERTIORARI"
    assert pattern_agreement(caption, "Petitioner", "Kentucky") is True
    assert pattern_agreement(caption, "Respondent", "Hollis Deshaun King") is True
    # The appellee given as the appellant: the caption says otherwise.
    assert pattern_agreement(caption, "Petitioner", "HOLLIS DESHAUN KING") is False
    assert pattern_agreement(caption, "Respondent", "Kentucky") is False
    dates = "Argued Feb. 7, 2014.\nDecided Sept. 18, 2014."
    assert pattern_agreement(dates, "Decision Date", "2014-09-18") is True
    assert (
        pattern_agreement(
            dates, "Decision Date", {"yyyy": "2014", "mm": "02", "dd": "07"}
        )
        is False
    )
    assert (
        pattern_agreement("Heard Oct. 6, 1994.", "Argument Date", "1994-10-06") is True
    )
    panel = "LAVINE, PRESCOTT and WEST, Js.\n\nOpinion\n\nLAVINE, J."
    assert pattern_agreement(panel, "Author Judge", {"last_name": "Lavine"}) is True
    assert pattern_agreement(panel, "Author Judge", "PRESCOTT") is False
    assert pattern_agreement(panel, "Panel Judge", "West") is True
    delivered = (
        "O’Connor, J., delivered the opinion of the Court, in which White joined."
    )
    assert pattern_agreement(delivered, "Author Judge", "O’Connor") is True
    assert pattern_agreement("No. 89-1909.", "Docket Number", "89-1990") is False
    assert (
        pattern_agreement(
            "Deborah A. Persico for appellant.",
            "Counsel for Appellant",
            "Deborah A. Persico",
        )
        is True
    )
    # Nothing stated of the field: the scorer decides.
    assert (
        pattern_agreement(
            "PEYTON v. DISTRICT OF COLUMBIA.", "Appellee", "District of Columbia"
        )
        is None
    )
    assert pattern_agreement(caption, "Outcome", "Affirmed") is None

"""The five checks of a citation against a small case-law store, through
the library and ``python -m pipeline cite-check`` / ``cite-evaluate``."""

import json

import pytest

from pipeline.checkers import checker_class
from pipeline.checkers.citations import (
    CaseLaw,
    CitationIndex,
    Coverage,
    LocalStore,
    check_citations,
    citation_claims,
    find_citations,
)
from pipeline.checkers.citations.sources import opinion_from_json
from pipeline.cli import main
from pipeline.types import Document
from tests.citation_data import OPINIONS, write_caselaw
from tests.scorers import WordOverlapScorer


@pytest.fixture
def files(tmp_path):
    return write_caselaw(tmp_path)


@pytest.fixture
def caselaw(files):
    store, index = files
    return CaseLaw(
        [LocalStore.read(store), CitationIndex.read(index)],
        coverage=Coverage.parse("U.S.:1-10"),
    )


def check(text, caselaw, scorer=None):
    return check_citations(find_citations(text, brief_id="b"), caselaw, scorer=scorer)


def test_a_faithful_citation_is_verified_with_its_evidence(caselaw):
    [r] = check(
        "“We hold that the statute does not create a private right of action.”"
        " Doe v. Roe, 5 U.S. 11, 12 (1990).",
        caselaw,
    )
    assert (r.status, r.problems) == ("verified", ())
    assert r.matched.id == "doe"
    assert r.evidence.text.startswith("We hold that the statute")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("See Doe v. Roe, 5 U.S. 15 (1990).", "no_such_case"),
        ("See Doe v. Roe, 446 Cal. Rptr. 4th 183 (1990).", "no_such_case"),
        ("See Smith v. Jones, 5 U.S. 11 (1990).", "case_name_mismatch"),
        ("See Doe v. Roe, 5 U.S. 11, 25 (1990).", "pincite_out_of_range"),
        ("See Doe v. Roe, 5 U.S. 11, 9 (1990).", "pincite_out_of_range"),
        (
            "“We hold that the statute does not create a private right of action.”"
            " Doe v. Roe, 5 U.S. 11, 14 (1990).",
            "pincite_out_of_range",
        ),
        (
            "“We hold that the law does not create a private right of action.”"
            " Doe v. Roe, 5 U.S. 11, 12 (1990).",
            "quote_not_found",
        ),
    ],
)
def test_each_kind_of_fabrication_is_named(caselaw, text, problem):
    [r] = check(text, caselaw)
    assert r.status == "hallucinated"
    assert r.problems == (problem,)
    assert r.score > 0.5


def test_recorded_last_page_bounds_the_pages_before_a_distant_next_case(caselaw):
    pages = {"poe": {"first_page": 20, "last_page": 22}}
    recorded = [opinion_from_json({**o, **pages.get(o["id"], {})}) for o in OPINIONS]
    store = CaseLaw([LocalStore(recorded), *caselaw.sources[1:]])
    [r] = check("See Poe v. Moe, 5 U.S. 20, 24 (1990).", store)
    assert r.problems == ("pincite_out_of_range",)


def test_next_case_in_the_volume_bounds_the_pages(caselaw):
    [inside] = check("See Doe v. Roe, 5 U.S. 11, 19 (1990).", caselaw)
    [beyond] = check("See Doe v. Roe, 5 U.S. 11, 21 (1990).", caselaw)
    assert "pincite_out_of_range" not in inside.problems
    assert beyond.problems == ("pincite_out_of_range",)


def test_absent_but_real_citations_are_unverifiable_never_hallucinated(caselaw):
    results = check(
        "See Zed v. Zoe, 5 U.S. 30 (1990). See Ames v. Bell, 7 F.3d 9 (9th Cir. 1993)."
        " See Cole v. Dunn, 55 U.S. 1 (1991).",
        caselaw,
    )
    assert [r.status for r in results] == ["verified", "unverifiable", "unverifiable"]
    assert results[0].matched.case_name == "ZED v. ZOE"


def test_a_page_past_the_volumes_last_case_is_unverifiable_not_fabricated(caselaw):
    """Orders (cert. denied) and in-chambers opinions are printed after a
    volume's decided cases and no index lists them; a page among the
    decided cases that starts none does not exist."""
    [order] = check("See Lee v. Johnson, 5 U.S. 1215 (1990).", caselaw)
    [inside] = check("See Lee v. Johnson, 5 U.S. 25 (1990).", caselaw)
    assert order.status == "unverifiable" and order.problems == ()
    assert "past the last decided case of 5 U.S." in order.checks[0].detail
    assert inside.problems == ("no_such_case",)


def test_a_volume_published_after_its_year_cannot_exist(caselaw):
    # Volume 5 is from 1990: volume 712 cannot be from 1985.
    [r] = check("See Foo v. Bar, 712 U.S. 1 (1985).", caselaw)
    assert r.problems == ("no_such_case",)
    assert "712" in r.checks[0].detail and "1990" in r.checks[0].detail


def test_proposition_is_scored_against_the_best_passages(caselaw):
    scorer = WordOverlapScorer()
    supported, unsupported = check(
        "The statute creates no private right of action. Doe v. Roe, 5 U.S. 11 (1990)."
        " Contracts signed on Sunday are void. Poe v. Moe, 5 U.S. 20 (1990).",
        caselaw,
        scorer=scorer,
    )
    assert supported.status == "verified"
    assert supported.proposition_pair[0].startswith("The statute creates no private")
    assert unsupported.problems == ("proposition_not_supported",)


def test_without_a_scorer_a_proposition_leaves_the_citation_unverifiable(caselaw):
    [r] = check(
        "Contracts signed on Sunday are void. Poe v. Moe, 5 U.S. 20 (1990).", caselaw
    )
    assert r.status == "unverifiable"


def test_checker_turns_results_into_findings(caselaw):
    briefs = {
        "b": Document(
            "b",
            "See Smith v. Jones, 5 U.S. 11 (1990). See Zed v. Zoe, 5 U.S. 30 (1990)."
            " See Ames v. Bell, 7 F.3d 9 (9th Cir. 1993).",
        )
    }
    checker = checker_class("citations")(briefs, caselaw=caselaw)
    claims = citation_claims(briefs)
    result = checker.check(claims)
    # A citation the case law cannot check is unverifiable, and says so: it
    # is not waiting for a scorer.
    assert [(f.verdict, f.reason) for f in result.findings] == [
        ("unsafe", "case_name_mismatch"),
        ("safe", None),
        ("unscored", "unverifiable"),
    ]
    assert checker.reasons["unverifiable"] == "Unverifiable"
    assert result.findings[0].extra["matched"]["case_name"] == "Doe v. Roe"
    # Each check in words, for the labeling page.
    assert [c["title"] for c in result.findings[2].extra["checks"]] == [
        "The case exists"
    ]
    stale = [claims[0].__class__(**{**claims[0].__dict__, "extra": {"start": 3}})]
    assert "no citation at that offset" in str(checker.check(stale).errors[0])


def test_cli_checks_briefs_and_evaluates_against_truth(files, tmp_path, capsys):
    store, index = files
    brief = "See Doe v. Roe, 5 U.S. 15 (1990). See Zed v. Zoe, 5 U.S. 30 (1990)."
    briefs = tmp_path / "briefs.jsonl"
    briefs.write_text(json.dumps({"id": "b", "text": brief}) + "\n")
    out = tmp_path / "out.jsonl"
    code = main(
        ["cite-check", "--briefs", str(briefs), "--caselaw", str(store),
         "--index", str(index), "--complete-reporters", "U.S.:1-10", "--out", str(out)]
    )  # fmt: skip
    assert code == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(x["status"], x["problems"]) for x in lines] == [
        ("hallucinated", ["no_such_case"]),
        ("verified", []),
    ]
    assert lines[1]["matched"] == {
        "opinion_id": "index:5 U.S. 30",
        "case_name": "ZED v. ZOE",
    }
    first = brief.index("Doe")
    truth = tmp_path / "truth.jsonl"
    rows = [
        {"start": first, "end": first + 23, "hallucination": "no_such_case"},
        {"start": brief.index("Zed"), "end": len(brief) - 1, "absent": True},
    ]
    truth.write_text(
        "".join(json.dumps({"brief_id": "b", "text": "", **r}) + "\n" for r in rows)
    )
    capsys.readouterr()
    assert main(["cite-evaluate", "--checked", str(out), "--truth", str(truth)]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert (figures["precision"], figures["recall"], figures["found"]) == (
        1.0,
        1.0,
        1.0,
    )
    assert figures["absent_called_hallucinated"] == 0.0


def test_cli_names_a_bad_store_line(tmp_path, capsys):
    store = tmp_path / "caselaw.jsonl"
    store.write_text('{"id": "x", "text": 5}\n')
    briefs = tmp_path / "briefs.jsonl"
    briefs.write_text('{"id": "b", "text": "nothing"}\n')
    code = main(
        [
            "cite-check",
            "--briefs",
            str(briefs),
            "--caselaw",
            str(store),
            "--out",
            str(tmp_path / "o"),
        ]
    )
    assert code == 2
    assert (
        "caselaw.jsonl:1: 'text' must be a non-empty string" in capsys.readouterr().err
    )


def test_a_proposition_judged_unsupported_is_a_training_pair(caselaw):
    briefs = {
        "b": Document(
            "b",
            "The statute creates a private right of action. Doe v. Roe, 5 U.S. 11"
            " (1990). See Smith v. Jones, 5 U.S. 11 (1990).",
        )
    }
    checker = checker_class("citations")(briefs, caselaw=caselaw)
    contrary, mismatch = checker.training_pairs(citation_claims(briefs))
    # The opinion states the contrary: the scorer should learn that pair.
    assert contrary.scored and contrary.hypothesis.startswith("The statute creates a")
    assert contrary.premise.startswith("The statute creates no private right")
    # A wrong case name is not the scorer's to learn.
    assert not mismatch.scored

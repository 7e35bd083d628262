"""Reading citations out of briefs: forms, names, pincites, quotations,
propositions; and the name, quotation and page rules they are checked by."""

import pytest

from pipeline.checkers.citations.names import names_match
from pipeline.checkers.citations.pages import reporter_pages, slip_pages
from pipeline.checkers.citations.parse import find_citations
from pipeline.checkers.citations.quotes import OpinionWords, find_quote
from pipeline.checkers.citations.reporters import Coverage, citation_key, implausible
from pipeline.checkers.citations.restatement import restatement
from pipeline.checkers.citations.sources import Opinion, PageMarker
from pipeline.errors import InputError

BRIEF = (
    "The machine-or-transformation test is not the sole test for patentability."
    " Bilski v. Kappos, 561 U.S. 593, 604-05 (2010). As the Court put it, “[t]he"
    " Court is unaware of any . . . common meaning.” Bilski, 561 U. S., at 603."
    " See also id. at 606. In United States v. Lopez, 514 U.S. 549, 557 (1995),"
    " the Court held that the Act exceeded the commerce power. Lopez, supra, at"
    " 560. Boone v. Vinson, 446 Cal. Rptr. 4th 183, 190 (2019) (holding that the"
    " rule applies). Fisher v. Univ. of Tex. at Austin, 570 U. S. ___, ___ (2013)"
    " (slip op., at 9)."
)


@pytest.fixture(scope="module")
def cites():
    return find_citations(BRIEF, brief_id="b1")


def test_every_form_is_found_with_its_span(cites):
    assert [(c.form, c.text) for c in cites] == [
        ("full", "Bilski v. Kappos, 561 U.S. 593, 604-05 (2010)"),
        ("short", "Bilski, 561 U. S., at 603"),
        ("id", "id. at 606"),
        ("full", "United States v. Lopez, 514 U.S. 549, 557 (1995)"),
        ("supra", "Lopez, supra, at 560"),
        ("full", "Boone v. Vinson, 446 Cal. Rptr. 4th 183, 190 (2019)"
                 " (holding that the rule applies)"),
        ("full", "Fisher v. Univ. of Tex. at Austin, 570 U. S. ___, ___ (2013)"
                 " (slip op., at 9)"),
    ]  # fmt: skip
    assert all(BRIEF[c.start : c.end] == c.text for c in cites)


def test_short_forms_take_the_case_of_the_citation_they_refer_to(cites):
    bilski, short, id_, lopez, supra = cites[:5]
    assert short.key == id_.key == bilski.key == "561 U.S. 593"
    assert (short.refers_to, id_.refers_to, supra.refers_to) == (0, 1, 3)
    assert id_.case_name == "Bilski"
    assert supra.key == "514 U.S. 549"
    assert [c.pincite.first for c in (short, id_, supra)] == [603, 606, 560]


def test_pincite_range_written_short_is_read_in_full(cites):
    assert (cites[0].pincite.first, cites[0].pincite.last) == (604, 605)


def test_quotation_in_the_sentence_before_belongs_to_the_citation(cites):
    assert [q.text for q in cites[1].quotes] == [
        "[t]he Court is unaware of any . . . common meaning."
    ]
    assert cites[0].quotes == ()


def test_proposition_is_the_sentence_before_or_around_or_the_parenthetical(cites):
    assert cites[0].proposition.startswith("The machine-or-transformation test is not")
    assert (
        cites[3].proposition
        == "the Court held that the Act exceeded the commerce power."
    )
    assert cites[5].proposition == "the rule applies"


def test_unknown_reporter_is_still_a_citation(cites):
    boone = cites[5]
    assert not boone.reporter_known
    assert boone.key == "446 Cal. Rptr. 4th 183"
    assert boone.year == "2019"


@pytest.mark.parametrize(
    ("text", "known"),
    [
        # A known reporter with a stray period, a database number: real.
        ("See Crawford v. Bd. of Educ., 17 Cal. 3d. 280, 295 (Cal. 1976).", True),
        ("See Phillips v. Ford Motor Co., 2003 Ill. Cir. LEXIS 20 (2003).", True),
        ("See Boone v. Vinson, 446 Cal. Rptr. 4th 183 (2019).", False),
    ],
)
def test_a_citation_eyecite_cannot_read_names_a_reporter_only_if_none_exists(
    text, known
):
    [c] = find_citations(text)
    assert c.reporter_known is known


def test_an_article_whose_title_holds_a_v_is_no_case_citation():
    text = "See Fiore, Domingues v. State of Nevada, 21 Whittier L. Rev. 215 (1999)."
    assert find_citations(text) == []


@pytest.mark.parametrize(
    ("text", "names"),
    [
        (
            "That was the goal.\n\nCertainly, Brown v. Bd. of Educ., 347 U.S. 483"
            " (1954), said so.",
            ["Brown v. Bd. of Educ."],
        ),
        (
            "It defies Green v. County [*22] School Board, 391 U.S. 430 (1968).",
            ["Green v. County School Board"],
        ),
        (
            "Bakke, 438 U.S. 265, 313 (1978) (opinion of Powell, J.)(quoting"
            " Keyishian v. Board of Regents, 385 U.S. 589, 603 (1967)).",
            ["Bakke", "Keyishian v. Board of Regents"],
        ),
        (
            "U.S. Br. 13 (citing Wygant, 476 U.S. at 277, and Palmore v. Sidoti,"
            " 466 U.S. 429, 432 (1984)).",
            ["Wygant", "Palmore v. Sidoti"],
        ),
        (
            "Krupski v. Costa Crociere S. p. A., 560 U. S. ___ (2010).",
            ["Krupski v. Costa Crociere S. p. A."],
        ),
        (
            "See Regents v. Bakke, 438 U.S. 265 (1978). Diversity is a goal the"
            " Constitution protects. 438 U.S. at 311-12.",
            ["Regents v. Bakke", "Regents v. Bakke"],
        ),
    ],
)
def test_a_case_name_holds_the_case_name_and_nothing_around_it(text, names):
    assert [c.case_name for c in find_citations(text)] == names


def test_short_forms_of_statutes_studies_and_articles_are_no_case_citations():
    text = (
        "See Grutter v. Bollinger, 539 U.S. 306, 325 (2003). The statute is"
        " 42 U.S.C. § 2000d. Id. Most alumni agreed. Chambers, supra, at 418."
        " Id. at 401. As held in Grutter, supra, at 330, diversity counts."
    )
    cites = find_citations(text)
    assert [(c.form, c.case_name) for c in cites] == [
        ("full", "Grutter v. Bollinger"),
        ("supra", "Grutter"),
    ]
    assert cites[1].refers_to == 0


def test_slip_citation_has_no_first_page_and_a_slip_pincite(cites):
    fisher = cites[6]
    assert fisher.key is None and fisher.volume == "570"
    assert fisher.pincite.slip and fisher.pincite.first == 9
    assert fisher.case_name == "Fisher v. Univ. of Tex. at Austin"


def test_citations_quoted_from_another_text_are_not_the_briefs():
    text = (
        "“The rule, Smith v. Jones, 123 F.3d 456 (1999), is old.”"
        " Doe v. Roe, 1 F.3d 2 (1993)."
    )
    assert [c.case_name for c in find_citations(text)] == ["Doe v. Roe"]


@pytest.mark.parametrize(
    ("cited", "actual", "same"),
    [
        ("Bilski v. Kappos", "BERNARD L. BILSKI v. DAVID J. KAPPOS, UNDER SEC.", True),
        ("Bilski", "Bilski v. Kappos", True),
        ("Smith vs. Jones", "Smith v. Jones", True),
        ("Fisher v. Univ. of Tex.", "FISHER v. UNIVERSITY OF TEXAS AT AUSTIN", True),
        ("U. S. v. Lopez", "UNITED STATES v. LOPEZ", True),
        ("In re Gault", "IN RE GAULT et al.", True),
        ("United States v. Lopez", "UNITED STATES v. MORRISON", False),
        ("Grutter v. Bollinger", "Gratz v. Bollinger", False),
        ("Boone v. Vinson", "Cinel v. Connick", False),
        # An agency by its initials.
        ("Metro Broad., Inc. v. F.C.C.", "METRO BROADCASTING, INC. v. FEDERAL"
         " COMMUNICATIONS COMMISSION et al.", True),
        ("NAACP v. Button", "NATIONAL ASSOCIATION FOR THE ADVANCEMENT OF COLORED"
         " PEOPLE v. BUTTON", True),
        ("SEC v. Jones", "FEDERAL COMMUNICATIONS COMMISSION v. JONES", False),
    ],
)  # fmt: skip
def test_case_names_match_by_party(cited, actual, same):
    assert names_match(cited, actual) is same


OPINION = (
    "The question is whether the statute applies. We hold that it does not, because "
    "the text says “only a person” may sue. *12 The petitioner's reading would make "
    "the word ‘only’ meaningless. *7042 Accordingly, the judgment is reversed. *13 "
    "It is so ordered."
)


@pytest.fixture
def opinion():
    pages = [PageMarker(str(p), OPINION.index(f"*{p} ")) for p in (12, 7042, 13)]
    return Opinion("o1", "Doe v. Roe", ("5 U.S. 11",), OPINION, tuple(pages))


@pytest.mark.parametrize(
    ("quotation", "exact"),
    [
        ("We hold that it does not", True),
        ("[W]e hold that it does not", True),
        ("we HOLD that it does not", True),
        ("the text says 'only a person' may sue", True),
        ("We hold . . . the text says", True),
        ("We hold [today] that it does not", True),
        ("We conclude that it does not", False),
        ("We hold that it does", True),
        ("We hold that it cannot", False),
    ],
)
def test_a_quotation_may_skip_and_alter_in_brackets_but_not_swap_a_word(
    opinion, quotation, exact
):
    assert find_quote(OpinionWords(opinion.text), quotation).exact is exact


def test_missed_quotation_points_at_the_closest_passage(opinion):
    m = find_quote(OpinionWords(opinion.text), "the judgment is affirmed")
    assert not m.exact
    assert "the judgment is" in opinion.text[m.start : m.end]


def test_junk_star_page_is_ignored_and_the_next_case_bounds_the_range(opinion):
    pages = reporter_pages(opinion, "5 U.S. 11")
    assert (pages.first, pages.last) == (11, 13)
    assert [p for p, _ in pages.markers] == [12, 13]
    assert pages.page_at(opinion.text.index("Accordingly")) == 12
    assert reporter_pages(opinion, "5 U.S. 11", next_case_page=12).last == 12


def test_slip_pages_restart_per_part():
    text = "[slip op. 1] a [slip op. 2] b === dissent === [slip op. 1] c"
    marks = tuple(
        PageMarker(p, text.index(f"[slip op. {p}]", at), "slip_op")
        for p, at in (("1", 0), ("2", 0), ("1", 20))
    )
    pages = slip_pages(Opinion("s", "A v. B", (), text, marks))
    assert (pages.first, pages.last) == (1, 2)
    assert pages.page_at(text.index(" c")) == 1


def test_citation_keys_use_the_standard_reporter_spelling():
    assert citation_key("561 U. S. 593") == "561 U.S. 593"
    assert citation_key("130 S.Ct. 3218") == "130 S. Ct. 3218"


def test_coverage_reads_reporter_volume_ranges():
    cov = Coverage.parse("U. S.:329-579, F.3d:7")
    assert cov.covers("U.S.", "561") and cov.covers("F.3d", 7)
    assert not cov.covers("U.S.", "580") and not cov.covers("F.3d", 8)
    for bad in ("U.S.", "U.S.:x", "U.S.:9-3", ":1-2"):
        with pytest.raises(InputError, match="complete reporters"):
            Coverage.parse(bad)


def test_a_signal_leaves_only_the_parenthetical_as_a_proposition():
    text = (
        "Private suits are barred by the statute. See Doe v. Roe, 5 U.S. 11 (1990)."
        " Private suits are barred by the statute. Doe v. Roe, 5 U.S. 11 (1990)."
        " Cf. Doe v. Roe, 5 U.S. 11 (1990) (holding that private suits are barred)."
    )
    signalled, direct, parenthetical = find_citations(text)
    assert signalled.proposition is None
    assert direct.proposition == "Private suits are barred by the statute."
    assert parenthetical.proposition == "private suits are barred"


@pytest.mark.parametrize(
    ("proposition", "said"),
    [
        ("The Court held that the Act infringes upon speech protected by the"
         " First Amendment.", "states"),
        ("the Act infringes upon speech unprotected by the First Amendment",
         "contradicts"),
        ("The Court held that the Act does not infringe upon speech protected by the"
         " First Amendment.", None),
        ("The Stolen Valor Act is not an infringement of protected speech.", None),
        ("the Act infringes upon speech protected by the First Amendment and the"
         " Fourteenth", None),
    ],
)  # fmt: skip
def test_a_restated_holding_is_settled_by_the_sentence_it_restates(proposition, said):
    passage = (
        "Held: The judgment is affirmed. The Stolen Valor Act infringes upon speech"
        " protected by the First Amendment."
    )
    assert restatement(proposition, passage) == said


def test_a_volume_no_series_could_have_is_implausible():
    assert "ended before volume 1000" in implausible("F.2d", "1203")
    assert implausible("F.2d", "388") is None
    assert implausible("U.S.", "1203") is None  # no later series

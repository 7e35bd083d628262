"""A citation project: case law imported by management command, a brief
uploaded, its citations found and checked by the check task, each with its
evidence for the labeling screen."""

import pytest
from django.core.management import CommandError, call_command

from annotator.claims import ingest, selectors
from annotator.claims.checking import claims_check, claims_find
from annotator.kinds.citations.models import CaseCitation, CaseOpinion
from annotator.labeling import handout
from annotator.models import (
    Claim,
    Label,
)
from pipeline.checkers.citations import find_citations
from tests.annotator.factories import make_project
from tests.citation_data import write_caselaw

pytestmark = pytest.mark.django_db

BRIEF = (
    "“We hold that the statute does not create a private right of action.”"
    " Doe v. Roe, 5 U.S. 11, 12 (1990). See Smith v. Jones, 5 U.S. 11 (1990)."
    " See Doe v. Roe, 5 U.S. 15 (1990). See Zed v. Zoe, 5 U.S. 30 (1990)."
    " See Ames v. Bell, 7 F.3d 9 (9th Cir. 1993)."
)


@pytest.fixture
def caselaw(tmp_path, settings):
    settings.CITATION_COMPLETE_REPORTERS = "U.S.:1-10"
    store, index = write_caselaw(tmp_path)
    call_command("import_caselaw", str(store))
    call_command("import_caselaw", str(index), "--index")


def test_import_commands_fill_the_store_and_index_and_run_twice_safely(
    caselaw, tmp_path
):
    assert CaseOpinion.objects.count() == 2
    assert set(CaseCitation.objects.values_list("key", "opinion__external_id")) == {
        ("5 U.S. 11", "doe"),
        ("5 U.S. 20", "poe"),
        ("5 U.S. 30", None),
    }
    store, index = write_caselaw(tmp_path)
    call_command("import_caselaw", str(store))
    call_command("import_caselaw", str(index), "--index")
    assert CaseCitation.objects.count() == 3


def test_a_bad_line_is_named_and_the_rest_imported(tmp_path, capsys):
    path = tmp_path / "bad.jsonl"
    path.write_text(
        '{"id": "a", "case_name": "A v. B", "citations": ["1 U.S. 1"], "text": "x"}\n'
        '{"id": "b", "citations": ["1 U.S. 5"]}\n'
    )
    with pytest.raises(CommandError) as raised:
        call_command("import_caselaw", str(path))
    assert raised.value.returncode == 1
    assert "bad.jsonl:2: 'text' must be a non-empty string" in capsys.readouterr().err
    assert list(CaseOpinion.objects.values_list("external_id", flat=True)) == ["a"]


def test_an_uploaded_brief_has_its_citations_found_and_checked(caselaw, unread_broker):
    project = make_project(kind="citations")
    report = ingest.documents_import(
        project=project, files=[("brief.txt", ingest.stream_of(BRIEF))]
    )
    assert report.created == 1
    summary = claims_check(project_id=project.pk)
    assert summary.checked == 5
    rows = list(Claim.objects.filter(project=project).order_by("pk"))
    assert [(r.verdict, r.reason, r.details["status"]) for r in rows] == [
        ("safe", "", "verified"),
        ("unsafe", "case_name_mismatch", "hallucinated"),
        ("unsafe", "no_such_case", "hallucinated"),
        ("safe", "", "verified"),
        ("unscored", "unverifiable", "unverifiable"),
    ]
    first = rows[0]
    assert first.external_id == f"brief:{BRIEF.index('Doe')}"
    # The citation in the brief first (the labeling window opens on it), then
    # the opinion passage its quotation was found in.
    assert first.evidence[0]["source"] == "brief"
    assert first.evidence[0]["role"] == "citation"
    assert (
        BRIEF[first.evidence[0]["start"] : first.evidence[0]["end"]]
        == first.data["citation"]
    )
    assert first.evidence[1]["source"] == "doe"
    assert first.evidence[1]["text"].startswith("We hold that the statute")
    assert first.evidence[2]["role"] == "case"
    assert rows[1].details["matched"]["case_name"] == "Doe v. Roe"
    assert rows[1].details["failed"] == "Case name mismatch: 5 U.S. 11 is Doe v. Roe"

    # Found once: a second run adds nothing and checks nothing.
    assert claims_find(project) == 0
    assert claims_check(project_id=project.pk).checked == 0

    items = handout.labeling_items(
        project=project, annotator=None, ids=[r.pk for r in rows[:2]]
    )
    assert items[1]["details"]["problems"] == ["case_name_mismatch"]
    # Why it is shown, in the citation checker's words.
    assert items[1]["why"] == {
        "code": "case_name_mismatch",
        "text": "Flagged: case name mismatch",
    }
    # Exported as its finding (a citation's evidence is no alignment).
    exported = list(selectors.export_rows(project=project, kind="claims"))
    assert "align" not in exported[1]
    assert (exported[1]["verdict"], exported[1]["reason"]) == (
        "unsafe",
        "case_name_mismatch",
    )
    assert exported[1]["evidence"] == rows[1].evidence
    assert exported[1]["details"]["matched"]["case_name"] == "Doe v. Roe"
    assert items[0]["document"]["window_text"].find("Doe v. Roe, 5 U.S. 11") >= 0


def test_complete_coverage_is_the_deployments_setting(caselaw, settings, unread_broker):
    settings.CITATION_COMPLETE_REPORTERS = ""
    project = make_project(kind="citations")
    ingest.documents_import(
        project=project,
        files=[("b.txt", ingest.stream_of("See Doe v. Roe, 5 U.S. 15 (1990)."))],
    )
    claims_check(project_id=project.pk)
    [row] = Claim.objects.filter(project=project)
    assert (row.verdict, row.details["status"]) == ("unscored", "unverifiable")


def test_a_volume_the_store_dates_later_cannot_be_from_an_earlier_year(
    caselaw, unread_broker
):
    project = make_project(kind="citations")
    ingest.documents_import(
        project=project,
        files=[("b.txt", ingest.stream_of("See Foo v. Bar, 712 U.S. 1 (1985)."))],
    )
    claims_check(project_id=project.pk)
    [row] = Claim.objects.filter(project=project)
    assert (row.verdict, row.reason) == ("unsafe", "no_such_case")
    assert "volume 5 is from 1990" in row.details["failed"]


def test_a_changed_brief_has_its_citations_found_again_and_keeps_its_labels(
    caselaw, unread_broker, django_user_model
):
    project = make_project(kind="citations")
    ingest.documents_import(
        project=project, files=[("brief.txt", ingest.stream_of(BRIEF))]
    )
    claims_check(project_id=project.pk)
    [labelled] = [
        p
        for p in Claim.objects.filter(project=project)
        if p.data["citation"].startswith("Smith")
    ]
    expert = django_user_model.objects.create_user("expert")
    Label.objects.create(claim=labelled, annotator=expert, label="unsafe")

    edited = "In short: " + BRIEF
    ingest.documents_import(
        project=project, files=[("brief.txt", ingest.stream_of(edited))]
    )
    summary = claims_check(project_id=project.pk)

    rows = Claim.objects.filter(project=project)
    found = {r.external_id for r in rows if r.pk != labelled.pk}
    assert found == {f"brief:{m.start}" for m in find_citations(edited)}
    assert summary.checked == 5
    # The labelled claim keeps its label; its offset no longer holds a
    # citation, which its check says instead of stopping the run.
    labelled.refresh_from_db()
    assert labelled.labels.count() == 1
    assert "no citation at that offset" in labelled.details["error"]

"""A project's kind picks its checker; adding a kind takes a checker
subpackage, the registry's ``Project.kind`` value and a claim partial, shown
with the tests' statement checker (tests/checkers)."""

import pytest

from annotator.claims.checking import claims_check
from annotator.models import Claim, Project, checker_kinds
from pipeline.checkers import checker_class
from tests.annotator.factories import (
    make_claim,
    make_document,
    make_project,
    train_on_labels,
)
from tests.kinds.statement.checker import KIND

pytestmark = pytest.mark.django_db


def test_the_kinds_offered_are_the_registered_checkers():
    offered = dict(checker_kinds())
    assert offered["extraction"] == checker_class("extraction").title
    # Registered by importing its module above; no migration needed.
    assert offered[KIND] == checker_class(KIND).title
    Project(name="statements", kind=KIND).full_clean()


def test_a_project_is_created_with_a_kind_and_keeps_it(personas, api):
    admin = api(personas.admin)
    response = admin.post("/api/projects/", {"name": "briefs"}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["kind"] == "extraction"
    url = f"/api/projects/{response.json()['id']}/"
    assert admin.patch(url, {"description": "x"}, format="json").status_code == 200

    response = admin.post(
        "/api/projects/", {"name": "tarot", "kind": "tarot"}, format="json"
    )
    assert response.status_code == 400
    assert "kind" in response.json()


def test_changing_a_kind_is_refused(personas, api):
    project = personas.project
    response = api(personas.admin).patch(
        f"/api/projects/{project.pk}/", {"kind": KIND}, format="json"
    )
    assert response.status_code == 400
    assert "chosen when it is created" in str(response.json()["kind"])
    project.refresh_from_db()
    assert project.kind == "extraction"


def test_a_project_of_the_test_kind_is_checked_by_its_checker():
    project = make_project(kind=KIND)
    document = make_document(
        project,
        external_id="memo",
        text="The board met in March. The budget was approved by the board.",
    )
    approved = make_claim(
        document, data={"statement": "the board approved the budget"}, checked_at=None
    )
    rejected = make_claim(
        document, data={"statement": "the board rejected the budget"}, checked_at=None
    )

    summary = claims_check(project_id=project.pk)

    # No scorer yet: what the checker passes is unscored, never safe.
    assert (summary.checked, summary.unscored, summary.unsafe) == (2, 1, 1)
    approved, rejected = Claim.objects.filter(pk__in=[approved.pk, rejected.pk])
    assert (
        approved.verdict == "unscored"
        and approved.hypothesis == approved.data["statement"]
    )
    assert approved.premise == "The budget was approved by the board."
    assert approved.evidence[0] == dict(
        source="memo",  # the document's external id, not its database id
        start=24,
        end=61,
        text="The budget was approved by the board.",
        role="sentence",
        score=1.0,
    )
    assert approved.evidence_score == 1.0 and len(approved.evidence) == 2
    assert (rejected.verdict, rejected.reason) == ("unsafe", "not_supported")
    assert rejected.evidence_score == 0.75  # the, board, budget of 4 words


@pytest.mark.django_db(transaction=True)
def test_a_project_of_the_test_kind_retrains_its_own_scorer(settings, tmp_path):
    """The training loop asks the project's checker for its pairs; gold set,
    evaluation and registration are the same as for extraction."""
    from annotator.models import Label

    settings.VAR_DIR = tmp_path
    project = make_project(kind=KIND, gold_share=0.3)
    statements = [
        ("the board approved the budget", "safe"),
        ("the meeting was held in march", "safe"),
        ("the board rejected the budget", "unsafe"),
    ]
    for d in range(12):
        document = make_document(
            project,
            external_id=f"minutes-{d}",
            text="The board approved the budget. The meeting was held in March.",
        )
        for statement, label in statements:
            claim = make_claim(document, data={"statement": statement}, checked_at=None)
            Label.objects.create(claim=claim, label=label)
    claims_check(project_id=project.pk)

    scorer, metadata = train_on_labels(project)
    assert metadata["kind"] == KIND
    assert metadata["label_counts"]["silver"] == 0
    # Measured on the gold set through the statement checker's own check:
    # its word rule gets every gold label right.
    assert scorer.gold_f1 == 1.0


def test_a_checker_is_built_only_with_the_options_it_takes(settings):
    from annotator.claims.checking import project_checker
    from annotator.core.errors import ConfigurationError

    settings.CITATION_COMPLETE_REPORTERS = "not a reporter list"
    settings.PROVENANCE_RELEVANCE = "lexical"
    project = make_project(
        kind="extraction", name="x", options={"align_threshold": 0.7}
    )
    assert project_checker(project, {}).align_threshold == 0.7
    provenance = project_checker(make_project(kind="provenance", name="p"), {})
    assert provenance._relevance == "lexical"
    # Only the kind that reads case law builds it, and meets its bad setting.
    with pytest.raises(ConfigurationError, match="CITATION_COMPLETE_REPORTERS"):
        project_checker(make_project(kind="citations", name="c"), {})

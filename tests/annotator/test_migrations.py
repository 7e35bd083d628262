"""Migrations that move existing data, run on a populated database."""

import hashlib

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("annotator", "0007_llm_run_shared_fields")]
AFTER = [("annotator", "0008_roles_receipts_tokens_heartbeat")]
AFTER_EVIDENCE = [("annotator", "0012_claim_evidence")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_roles_receipts_and_tokens_carry_existing_rows_over():
    """0008: members keep their access (staff become project admins), stored
    client ids get receipts, plain-text tokens become digests that still
    authenticate, and the plain-text table is gone."""
    old = _migrate(BEFORE)
    try:
        User = old.get_model("auth", "User")
        Project = old.get_model("annotator", "Project")
        Document = old.get_model("annotator", "Document")
        Prediction = old.get_model("annotator", "Prediction")
        Annotation = old.get_model("annotator", "Annotation")
        User.objects.create(username="staff", is_staff=True)
        expert = User.objects.create(username="expert")
        project = Project.objects.create(name="before-roles")
        project.members.add(expert)
        document = Document.objects.create(project=project, external_id="d", text="t")
        prediction = Prediction.objects.create(
            project=project, document=document, external_id="p", type="GPE"
        )
        client_id = "0b0e7a52-6f1e-4f8e-9a51-5a3c6a0d2c11"
        Annotation.objects.create(
            prediction=prediction, annotator=expert, label="safe", client_id=client_id
        )
        with connection.cursor() as cursor:
            # DRF's authtoken table as an older deployment has it.
            cursor.execute(
                "CREATE TABLE authtoken_token (key varchar(40) PRIMARY KEY, "
                "created timestamptz NOT NULL, user_id integer NOT NULL)"
            )
            cursor.execute(
                "INSERT INTO authtoken_token VALUES (%s, now(), %s)",
                ["a" * 40, expert.pk],
            )
        new = _migrate(AFTER)
        Membership = new.get_model("annotator", "Membership")
        roles = dict(
            Membership.objects.filter(project_id=project.pk).values_list(
                "user__username", "role"
            )
        )
        assert roles == {"expert": "expert", "staff": "admin"}
        receipt = new.get_model("annotator", "LabelReceipt").objects.get()
        assert (str(receipt.client_id), receipt.annotator_id) == (client_id, expert.pk)
        token = new.get_model("annotator", "ApiToken").objects.get()
        assert token.digest == hashlib.sha256(b"a" * 40).hexdigest()
        assert "authtoken_token" not in connection.introspection.table_names()
    finally:
        _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
    # The carried-over token still works against the app.
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {'a' * 40}")
    assert client.get("/api/projects/").status_code == 200


@pytest.mark.django_db(transaction=True)
def test_claim_evidence_migration_keeps_spans_labels_and_scores():
    """0012 on a populated database: each aligned span becomes the first
    evidence item, labels and scores stay, an old non-entity ``kind`` lands in
    ``extra``; migrating back restores the columns."""
    before = [("annotator", "0011_project_kind")]
    old = _migrate(before)
    try:
        User = old.get_model("auth", "User")
        Project = old.get_model("annotator", "Project")
        Document = old.get_model("annotator", "Document")
        Prediction = old.get_model("annotator", "Prediction")
        Annotation = old.get_model("annotator", "Annotation")
        PredictionScore = old.get_model("annotator", "PredictionScore")
        expert = User.objects.create(username="expert")
        project = Project.objects.create(name="before-evidence")
        document = Document.objects.create(
            project=project, external_id="decision-1", text="x" * 40 + "Toronto"
        )
        checked = Prediction.objects.create(
            project=project,
            document=document,
            external_id="checked",
            type="GPE",
            value="Toronto",
            hypothesis="GPE: Toronto",
            align_start=40,
            align_end=47,
            align_text="Toronto",
            align_score=0.9,
            score=0.8,
            verdict="safe",
        )
        Prediction.objects.create(
            project=project,
            document=document,
            external_id="unchecked",
            type="GPE",
            kind="citation",
            extra={"page": 3},
        )
        Annotation.objects.create(prediction=checked, annotator=expert, label="safe")
        PredictionScore.objects.create(
            prediction=checked, scorer="nli", scorer_version="v1", score=0.8
        )

        new = _migrate(AFTER_EVIDENCE)
        Prediction = new.get_model("annotator", "Prediction")
        moved = Prediction.objects.get(external_id="checked")
        assert moved.evidence == [
            dict(
                source="decision-1",
                start=40,
                end=47,
                text="Toronto",
                role="aligned",
                score=0.9,
            )
        ]
        assert (moved.premise, moved.evidence_score) == ("Toronto", 0.9)
        assert (moved.hypothesis, moved.score, moved.verdict) == (
            "GPE: Toronto",
            0.8,
            "safe",
        )
        assert new.get_model("annotator", "Annotation").objects.get().label == "safe"
        score = new.get_model("annotator", "PredictionScore").objects.get()
        assert (score.prediction_id, score.score) == (moved.pk, 0.8)
        untouched = Prediction.objects.get(external_id="unchecked")
        assert untouched.evidence == [] and untouched.evidence_score is None
        assert untouched.extra == {"page": 3, "kind": "citation"}

        back = _migrate(before).get_model("annotator", "Prediction")
        restored = back.objects.get(external_id="checked")
        assert (restored.align_start, restored.align_end) == (40, 47)
        assert (restored.align_text, restored.align_score) == ("Toronto", 0.9)
        again = back.objects.get(external_id="unchecked")
        assert (again.kind, again.extra) == ("citation", {"page": 3})
    finally:
        _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_safe_without_a_score_becomes_unscored_and_back():
    """0013: a verdict no scorer gave is unscored (and first in the queue);
    a scored safe verdict stays."""
    before = [("annotator", "0012_claim_evidence")]
    old = _migrate(before)
    try:
        Project = old.get_model("annotator", "Project")
        Document = old.get_model("annotator", "Document")
        Prediction = old.get_model("annotator", "Prediction")
        project = Project.objects.create(name="before-unscored")
        document = Document.objects.create(project=project, external_id="d", text="t")
        for external_id, score in (("alignment-only", None), ("scored", 0.9)):
            Prediction.objects.create(
                project=project,
                document=document,
                external_id=external_id,
                type="GPE",
                verdict="safe",
                score=score,
                uncertainty=None if score is None else 0.4,
            )
        new = _migrate([("annotator", "0013_unscored_verdict")])
        rows = new.get_model("annotator", "Prediction").objects
        assert rows.get(external_id="alignment-only").verdict == "unscored"
        assert rows.get(external_id="alignment-only").uncertainty == 0
        assert rows.get(external_id="scored").verdict == "safe"
        back = _migrate(before).get_model("annotator", "Prediction").objects
        assert back.get(external_id="alignment-only").verdict == "safe"
    finally:
        _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())

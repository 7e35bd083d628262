"""The migrations: one squashed initial migration (issue 29), which a
database migrated before the squash (0001 to 0021 applied) takes as applied,
with nothing of it left to run; then the rename of Prediction to Claim and
the move of a claim's own fields into its data, of an extraction project's
settings into its options and of a label's correction into one keyed by its
claim's kind, which keep every row."""

import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.recorder import MigrationRecorder

SQUASHED = ("annotator", "0001_squashed_0021_run_help_texts")


@pytest.mark.django_db(transaction=True)
def test_a_database_migrated_before_the_squash_has_nothing_to_run():
    recorder = MigrationRecorder(connection)
    replaced = MigrationExecutor(connection).loader.disk_migrations[SQUASHED].replaces
    assert [name for _, name in replaced][:1] == ["0001_initial"]
    assert replaced[-1] == ("annotator", "0021_run_help_texts")
    rows = recorder.migration_qs.filter(app="annotator")
    recorded = list(rows.values_list("name", flat=True))
    try:
        # The table as a deployment migrated before the squash has it.
        rows.delete()
        for app, name in replaced:
            recorder.record_applied(app, name)
        executor = MigrationExecutor(connection)
        assert SQUASHED in executor.loader.applied_migrations
        assert executor.migration_plan([SQUASHED]) == []
    finally:
        rows.delete()
        for name in recorded:
            recorder.record_applied("annotator", name)


@pytest.mark.django_db
def test_the_queue_state_triggers_are_installed():
    """The squash keeps the SQL of the former migration 0006: the triggers
    that keep each claim's queue state (test_queue_state.py says what they
    do)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")
        triggers = {row[0] for row in cursor.fetchall()}
    assert {
        "annotator_prediction_queue_state",
        "annotator_annotation_queue_state",
        "annotator_project_queue_state",
    } <= triggers


CLAIM = ("annotator", "0002_prediction_is_claim")


def _migrate(target):
    executor = MigrationExecutor(connection)
    executor.migrate([target])
    return executor.loader.project_state([target]).apps


@pytest.mark.django_db(transaction=True)
def test_renaming_prediction_to_claim_keeps_every_row_label_and_score():
    """Rows written as Predictions before the rename read back as Claims with
    their labels, scores, leases, receipts and adjudication, and the admin's
    content type follows the model (its log entries and permissions stay)."""
    old = _migrate(SQUASHED)
    try:
        User = old.get_model("auth", "User")
        expert = User.objects.create(username="migrated-expert")
        project = old.get_model("annotator", "Project").objects.create(
            name="migrated", kind="extraction"
        )
        document = old.get_model("annotator", "Document").objects.create(
            project=project, external_id="d1", text="Jamaica is an island."
        )
        prediction = old.get_model("annotator", "Prediction").objects.create(
            project=project,
            document=document,
            external_id="p1",
            type="location",
            value="Jamaica",
            context="Jamaica",
            verdict="safe",
            score=0.93,
        )
        old.get_model("annotator", "PredictionScore").objects.create(
            prediction=prediction, scorer="nli", score=0.93
        )
        old.get_model("annotator", "Annotation").objects.create(
            prediction=prediction, annotator=expert, label="unsafe", note="kept"
        )
        old.get_model("annotator", "Adjudication").objects.create(
            prediction=prediction, reviewer=expert, label="unsafe"
        )
        # The content types as a database migrated before the rename has them.
        types = ContentType.objects
        types.filter(app_label="annotator", model__in=["claim", "claimscore"]).delete()
        types.get_or_create(app_label="annotator", model="prediction")
    finally:
        leaf = MigrationExecutor(connection).loader.graph.leaf_nodes("annotator")
        new = _migrate(leaf[0])

    claim = new.get_model("annotator", "Claim").objects.get(external_id="p1")
    assert claim.pk == prediction.pk
    assert claim.data == {"type": "location", "value": "Jamaica", "context": "Jamaica"}
    assert claim.project.claims.get() == claim and claim.document.claims.get() == claim
    assert [(s.scorer, s.score) for s in claim.scores.all()] == [("nli", 0.93)]
    assert [(a.label, a.note) for a in claim.labels.all()] == [("unsafe", "kept")]
    assert claim.adjudication.label == "unsafe"
    types = ContentType.objects
    assert types.filter(app_label="annotator", model="claim").exists()
    assert not types.filter(app_label="annotator", model="prediction").exists()


DATA = ("annotator", "0003_claim_data")

#: A claim of each kind as the columns held it (type, value, context, extra),
#: and its data and extra after the move.
BY_KIND = {
    "extraction": (
        ("location", {"city": "Kingston"}, "in Kingston", {"page": 2}),
        {"type": "location", "value": {"city": "Kingston"}, "context": "in Kingston"},
        {"page": 2},
    ),
    "citations": (
        (
            "case_citation",
            "Roe v. Doe, 5 U.S. 15",
            "Roe v. Doe, 5 U.S. 15",
            {"start": 4, "end": 25, "form": "full"},
        ),
        {"citation": "Roe v. Doe, 5 U.S. 15", "start": 4, "end": 25, "form": "full"},
        {},
    ),
    "provenance": (
        ("rag_answer", "In Oslo.", "", {}),
        {"answer": "In Oslo.", "query": "Where is its head office?"},
        {},
    ),
    "consistency": (
        ("response_block", "It rains.", "", {"block": 1, "start": 9, "end": 18}),
        {"sentence": "It rains.", "block": 1, "start": 9, "end": 18},
        {},
    ),
}


@pytest.mark.django_db(transaction=True)
def test_moving_claims_fields_into_data_keeps_each_kinds_fields_both_ways():
    """Each kind's claim comes out of the old columns into the data its
    checker reads (a RAG answer's query from its item's document), keeps its
    label, and goes back to the same columns when migrated back."""
    old = _migrate(CLAIM)
    leaf = MigrationExecutor(connection).loader.graph.leaf_nodes("annotator")[0]
    try:
        expert = old.get_model("auth", "User").objects.create(username="moved")
        ids = {}
        for kind, ((type_, value, context, extra), _, _) in BY_KIND.items():
            project = old.get_model("annotator", "Project").objects.create(
                name=f"moved-{kind}", kind=kind
            )
            document = old.get_model("annotator", "Document").objects.create(
                project=project,
                external_id="d1",
                text="Roe v. Doe, 5 U.S. 15. It rains.",
                metadata={"query": "Where is its head office?"},
            )
            claim = old.get_model("annotator", "Claim").objects.create(
                project=project,
                document=document,
                external_id="c1",
                type=type_,
                value=value,
                context=context,
                extra=extra,
            )
            old.get_model("annotator", "Annotation").objects.create(
                claim=claim, annotator=expert, label="safe"
            )
            ids[kind] = claim.pk
        new = _migrate(leaf)
        Claim = new.get_model("annotator", "Claim")
        for kind, (_, data, extra) in BY_KIND.items():
            claim = Claim.objects.get(pk=ids[kind])
            assert (claim.data, claim.extra) == (data, extra), kind
            assert [a.label for a in claim.labels.all()] == ["safe"]

        back = _migrate(CLAIM).get_model("annotator", "Claim")
        for kind, (columns, _, _) in BY_KIND.items():
            claim = back.objects.get(pk=ids[kind])
            assert (claim.type, claim.value, claim.context, claim.extra) == columns
    finally:
        _migrate(leaf)


CLAIM_DATA_ONLY = ("annotator", "0004_claim_data_only")


@pytest.mark.django_db(transaction=True)
def test_an_extraction_projects_settings_move_into_its_options_and_back():
    """An extraction project's schema, prompt and alignment threshold come out
    of their columns into its options; another kind's project keeps none; going
    back puts them in the columns again."""
    old = _migrate(CLAIM_DATA_ONLY)
    leaf = MigrationExecutor(connection).loader.graph.leaf_nodes("annotator")[0]
    schema = {"entity_types": {"GPE": {"description": "a place"}}}
    try:
        Project = old.get_model("annotator", "Project")
        extraction = Project.objects.create(
            name="options-extraction",
            kind="extraction",
            entity_schema=schema,
            extraction_prompt="Places only.",
            align_threshold=0.7,
        )
        rag = Project.objects.create(
            name="options-rag", kind="provenance", align_threshold=0.6
        )
        new = _migrate(leaf).get_model("annotator", "Project")
        assert new.objects.get(pk=extraction.pk).options == {
            "entity_schema": schema,
            "extraction_prompt": "Places only.",
            "align_threshold": 0.7,
        }
        assert new.objects.get(pk=rag.pk).options == {}

        back = _migrate(CLAIM_DATA_ONLY).get_model("annotator", "Project")
        restored = back.objects.get(pk=extraction.pk)
        assert (
            restored.entity_schema,
            restored.extraction_prompt,
            restored.align_threshold,
        ) == (schema, "Places only.", 0.7)
    finally:
        _migrate(leaf)


OPTIONS_ONLY = ("annotator", "0007_run_budget_cost_cancel")

#: A label's corrected type and value on a claim of each kind, its correction
#: after the move, and its extra.
CORRECTIONS = {
    "extraction": (("LOC", "Ottawa"), {"type": "LOC", "value": "Ottawa"}, {}),
    "consistency": (("", "It snows."), {"sentence": "It snows."}, {}),
    "citations": (
        ("case", "Roe v. Doe, 6 U.S. 1"),
        {"citation": "Roe v. Doe, 6 U.S. 1"},
        {"corrected_type": "case"},
    ),
    "provenance": (("", None), None, {}),
}


@pytest.mark.django_db(transaction=True)
def test_a_labels_correction_is_keyed_by_its_claims_kind_both_ways():
    """Each label's corrected type and value come into its correction under
    the keys of its claim's kind (a type where the kind has no groups stays in
    the label's extra), and go back to the same columns."""
    old = _migrate(OPTIONS_ONLY)
    leaf = MigrationExecutor(connection).loader.graph.leaf_nodes("annotator")[0]
    try:
        expert = old.get_model("auth", "User").objects.create(username="corrector")
        ids = {}
        for kind, ((type_, value), _, _) in CORRECTIONS.items():
            project = old.get_model("annotator", "Project").objects.create(
                name=f"corrected-{kind}", kind=kind
            )
            document = old.get_model("annotator", "Document").objects.create(
                project=project, external_id="d1", text="It rains."
            )
            claim = old.get_model("annotator", "Claim").objects.create(
                project=project, document=document, external_id="c1"
            )
            ids[kind] = (
                old.get_model("annotator", "Annotation")
                .objects.create(
                    claim=claim,
                    annotator=expert,
                    label="unsafe",
                    corrected_type=type_,
                    corrected_value=value,
                    note="kept",
                )
                .pk
            )
        Label = _migrate(leaf).get_model("annotator", "Label")
        for kind, (_, correction, extra) in CORRECTIONS.items():
            label = Label.objects.get(pk=ids[kind])
            assert (label.correction, label.extra, label.note) == (
                correction,
                extra,
                "kept",
            ), kind

        back = _migrate(OPTIONS_ONLY).get_model("annotator", "Annotation")
        for kind, (columns, _, _) in CORRECTIONS.items():
            label = back.objects.get(pk=ids[kind])
            assert (label.corrected_type, label.corrected_value) == columns, kind
            assert label.extra == {}
    finally:
        _migrate(leaf)


LABEL = ("annotator", "0010_annotation_is_label")


@pytest.mark.django_db(transaction=True)
def test_a_claim_names_the_run_that_made_it_by_type_and_id_both_ways():
    """A claim an extraction run made keeps that run, now named by its type
    and id; going back keeps it under the foreign key again."""
    old = _migrate(LABEL)
    leaf = MigrationExecutor(connection).loader.graph.leaf_nodes("annotator")[0]
    try:
        project = old.get_model("annotator", "Project").objects.create(
            name="made-by-run", kind="extraction"
        )
        document = old.get_model("annotator", "Document").objects.create(
            project=project, external_id="d1", text="It rains."
        )
        run = old.get_model("annotator", "ExtractionRun").objects.create(
            project=project, model="m"
        )
        Claim = old.get_model("annotator", "Claim")
        made = Claim.objects.create(
            project=project, document=document, external_id="c1", source_run=run
        )
        imported = Claim.objects.create(
            project=project, document=document, external_id="c2"
        )

        new = _migrate(leaf).get_model("annotator", "Claim")
        claim = new.objects.get(pk=made.pk)
        assert (claim.source_run_type, claim.source_run_id) == (
            "annotator.extractionrun",
            run.pk,
        )
        assert new.objects.get(pk=imported.pk).source_run_type == ""

        back = _migrate(LABEL).get_model("annotator", "Claim")
        assert back.objects.get(pk=made.pk).source_run_id == run.pk
        assert back.objects.get(pk=imported.pk).source_run_id is None
    finally:
        _migrate(leaf)

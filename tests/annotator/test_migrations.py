"""The migrations: one squashed initial migration (issue 29), which a
database migrated before the squash (0001 to 0021 applied) takes as applied,
with nothing left to run."""

import pytest
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
        assert executor.migration_plan(executor.loader.graph.leaf_nodes()) == []
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

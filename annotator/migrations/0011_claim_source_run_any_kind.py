"""A claim names the run that made it by the run's model and id (issue 29):
``source_run`` was a key to extraction's runs, so another kind's run could
make claims but not name itself on them. The column keeps its name and
values and loses its foreign key constraint (no rewrite); each claim an
extraction run made gets that run's model. Reversible: going back forgets
the runs of other kinds, and runs deleted since, before the constraint
comes back."""

import django.db.models.deletion
from django.db import migrations, models

EXTRACTION_RUN = "annotator.extractionrun"


def extraction_runs(apps, schema_editor):
    apps.get_model("annotator", "Claim").objects.using(
        schema_editor.connection.alias
    ).filter(source_run_id__isnull=False).update(source_run_type=EXTRACTION_RUN)


def only_extraction_runs(apps, schema_editor):
    db = schema_editor.connection.alias
    runs = apps.get_model("annotator", "ExtractionRun").objects.using(db)
    claims = apps.get_model("annotator", "Claim").objects.using(db)
    claims.filter(source_run_id__isnull=False).exclude(
        source_run_type=EXTRACTION_RUN, source_run_id__in=runs.values("pk")
    ).update(source_run_id=None)


class Migration(migrations.Migration):
    dependencies = [("annotator", "0010_annotation_is_label")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.AlterField(
                    model_name="claim",
                    name="source_run",
                    field=models.ForeignKey(
                        blank=True,
                        db_constraint=False,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="claims",
                        to="annotator.extractionrun",
                    ),
                ),
            ],
            state_operations=[
                migrations.RemoveField(model_name="claim", name="source_run"),
                migrations.AddField(
                    model_name="claim",
                    name="source_run_id",
                    field=models.BigIntegerField(
                        blank=True, db_index=True, help_text="That run's id.", null=True
                    ),
                ),
            ],
        ),
        migrations.AddField(
            model_name="claim",
            name="source_run_type",
            field=models.CharField(
                blank=True,
                help_text="The model of the LLM run that made the claim "
                '("annotator.extractionrun"), if one did; empty for an imported '
                "claim.",
                max_length=100,
            ),
        ),
        migrations.RunPython(extraction_runs, only_extraction_runs),
    ]

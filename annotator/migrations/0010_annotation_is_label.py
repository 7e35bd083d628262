"""Annotation is now Label (issue 29), the one word the app, the API and the
pages use for an expert's decision on a claim: a new name in code only. The
table, its columns, indexes, constraints and the queue state trigger keep
theirs, so the database is neither rewritten nor locked; the content type is
renamed with the model, as Django's RenameModel does, so admin history and
permissions follow."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def rename_content_type(apps, schema_editor, old="annotation", new="label"):
    types = apps.get_model("contenttypes", "ContentType").objects.using(
        schema_editor.connection.alias
    )
    if not types.filter(app_label="annotator", model=new).exists():
        types.filter(app_label="annotator", model=old).update(model=new)


def restore_content_type(apps, schema_editor):
    rename_content_type(apps, schema_editor, old="label", new="annotation")


class Migration(migrations.Migration):
    dependencies = [
        ("annotator", "0009_label_correction_only"),
        ("contenttypes", "0002_remove_content_type_name"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.RenameModel("Annotation", "Label"),
                migrations.AlterModelTable("label", "annotator_annotation"),
                migrations.AlterField(
                    model_name="label",
                    name="claim",
                    field=models.ForeignKey(
                        db_column="prediction_id",
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="labels",
                        to="annotator.claim",
                    ),
                ),
                migrations.AlterField(
                    model_name="label",
                    name="annotator",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="labels",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
        ),
        migrations.RunPython(rename_content_type, restore_content_type),
    ]
